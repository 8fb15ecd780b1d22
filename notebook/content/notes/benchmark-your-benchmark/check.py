import numpy as np

# Timings (ms) from five runs of the same configuration, fixed here so the check is exact.
timings = np.array([41.8, 40.9, 44.7, 41.2, 58.3])
N_RUNS = len(timings)

one_run = timings[:1]  # the bug: the list held a single measurement
all_runs = timings[:N_RUNS]  # the fix: every run is kept


def summary(t):
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    return f"median {med:.1f} ms, IQR {q3 - q1:.1f} ms over {len(t)} run(s)"


print("bug:", summary(one_run))
print("fix:", summary(all_runs))

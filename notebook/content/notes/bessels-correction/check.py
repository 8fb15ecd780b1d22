import numpy as np

data = np.array([10, 12, 23, 23, 16, 23, 21, 16])
print("mean:", data.mean())
print("divide by N:  ", round(float(np.var(data)), 4))
print("divide by N-1:", round(float(np.var(data, ddof=1)), 4))

# Average both estimators over many small samples from a population with variance 4.
rng = np.random.default_rng(3)
samples = rng.normal(0.0, 2.0, size=(200_000, 5))
print("E[var, N]  ~", round(float(samples.var(axis=1).mean()), 2))
print("E[var, N-1]~", round(float(samples.var(axis=1, ddof=1).mean()), 2))

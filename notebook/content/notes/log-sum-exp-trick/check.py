import numpy as np

logits = np.array([1000.0, 1001.0, 1002.0])
with np.errstate(over="ignore", invalid="ignore"):
    naive = np.exp(logits) / np.exp(logits).sum()
m = logits.max()
lse = m + np.log(np.exp(logits - m).sum())
stable = np.exp(logits - lse)
print("naive:", naive)
print("logsumexp:", round(float(lse), 4))
print("stable:", np.round(stable, 4))

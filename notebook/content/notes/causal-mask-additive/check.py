import numpy as np

T = 4
causal = np.triu(np.full((T, T), -np.inf), k=1)
padding = np.where(np.array([True, True, True, False]), 0.0, -np.inf)  # last token is padding
mask = causal + padding  # broadcasting adds the padding row to every query
print(mask)
scores = np.zeros((T, T)) + mask
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
print(np.round(w, 3))

import numpy as np


def attention(Q, K, V, M):
    s = Q @ K.T / np.sqrt(K.shape[-1]) + M  # the mask is added to the scores
    w = np.exp(s - s.max(axis=-1, keepdims=True))  # exp(-inf) is exactly 0
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


T = 4
causal = np.triu(np.full((T, T), -np.inf), k=1)  # -inf above the diagonal, 0 elsewhere
print(causal.tolist())

rng = np.random.default_rng(1)
Q, K, V = rng.normal(size=(3, T, 8))
out, w = attention(Q, K, V, causal)
print((w > 0).astype(int).tolist(), w.sum(axis=-1).round(6).tolist())

# changing a later token's value cannot change what earlier tokens computed
V2 = V.copy()
V2[3] += 100.0
out2, _ = attention(Q, K, V2, causal)
print(np.allclose(out[:3], out2[:3]), np.allclose(out[3], out2[3]))

# padding: the last key is filler, so no query may look at it
padding = np.where(np.arange(T) == T - 1, -np.inf, 0.0)  # one entry per key, broadcast over rows
_, w = attention(Q, K, V, np.zeros((T, T)) + padding)
print(w[:, -1].tolist(), w.sum(axis=-1).round(6).tolist())

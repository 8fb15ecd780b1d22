import numpy as np


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    weights = softmax(scores)
    return weights @ V, weights


rng = np.random.default_rng(0)
Q, K, V = (rng.standard_normal((4, 8)) for _ in range(3))
out, w = attention(Q, K, V)
print("out", out.shape)
print("weights", w.shape)
print("rows sum to 1:", bool(np.allclose(w.sum(axis=-1), 1.0)))

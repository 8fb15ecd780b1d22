import numpy as np

rng = np.random.default_rng(2)
T, d = 6, 4
X = rng.standard_normal((T, d))
Wq, Wk, Wv = (rng.standard_normal((d, d)) for _ in range(3))


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# all positions at once, with a causal mask
Q, K, V = X @ Wq, X @ Wk, X @ Wv
mask = np.triu(np.full((T, T), -np.inf), k=1)
full = softmax(Q @ K.T / np.sqrt(d) + mask) @ V

# one position at a time, appending to the cache
keys, values, steps = np.empty((0, d)), np.empty((0, d)), []
for t in range(T):
    keys = np.vstack([keys, X[t] @ Wk])
    values = np.vstack([values, X[t] @ Wv])
    steps.append(softmax((X[t] @ Wq) @ keys.T / np.sqrt(d)) @ values)

print("cache shape after decoding:", keys.shape)
print("matches full attention:", bool(np.allclose(full, np.array(steps))))

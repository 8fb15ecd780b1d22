import numpy as np


def layer_norm(x, eps=1e-5):
    c = x - x.mean(axis=-1, keepdims=True)
    return c / np.sqrt((c**2).mean(axis=-1, keepdims=True) + eps)


d, L = 16, 12
rng = np.random.default_rng(0)
W = rng.normal(size=(L, d, d)) / np.sqrt(d)


def F(layer, x):  # a stand-in sublayer: one linear map and a ReLU
    return np.maximum(x @ W[layer], 0.0)


x0 = rng.normal(size=d)
post, pre, updates = x0.copy(), x0.copy(), []
for layer in range(L):
    post = layer_norm(post + F(layer, post))  # post-norm: add, then normalise the stream
    updates.append(F(layer, layer_norm(pre)))  # pre-norm: normalise a copy, add to the stream
    pre = pre + updates[-1]

print(round(float(np.linalg.norm(post)), 3), round(float(np.linalg.norm(pre)), 3))
print(np.allclose(pre, x0 + np.sum(updates, axis=0)))  # the stream is x0 plus every update
print(round(float(np.linalg.norm(layer_norm(pre))), 3))  # the final norm that pre-norm needs

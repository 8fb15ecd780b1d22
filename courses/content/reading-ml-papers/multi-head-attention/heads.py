import numpy as np


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


T, d_model, h = 5, 8, 2
d_head = d_model // h  # d_k = d_v = d_model / h
rng = np.random.default_rng(0)
x = rng.normal(size=(T, d_model))
W_Q, W_K, W_V, W_O = rng.normal(size=(4, d_model, d_model)) / np.sqrt(d_model)


def split(a):  # (T, d_model) -> (h, T, d_head): head i takes columns i*d_head ... (i+1)*d_head - 1
    return a.reshape(T, h, d_head).transpose(1, 0, 2)


Q, K, V = split(x @ W_Q), split(x @ W_K), split(x @ W_V)
w = softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d_head))  # every head at once
heads = w @ V
out = heads.transpose(1, 0, 2).reshape(T, d_model) @ W_O  # concatenate, then project
print(Q.shape, w.shape, heads.shape, out.shape)

loop = []  # the same computation one head at a time, with column slices
for i in range(h):
    cols = slice(i * d_head, (i + 1) * d_head)
    q, k, v = (x @ W_Q)[:, cols], (x @ W_K)[:, cols], (x @ W_V)[:, cols]
    loop.append(softmax(q @ k.T / np.sqrt(d_head)) @ v)
print(np.allclose(np.concatenate(loop, axis=1) @ W_O, out))
print(w.sum(axis=-1).round(6).tolist())
print(W_Q.size + W_K.size + W_V.size + W_O.size)  # 4 d_model², whatever h is

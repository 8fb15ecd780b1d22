"""Attention, layer norm and Adam, each written straight from its equation."""

import numpy as np


def scaled_dot_product_attention(queries, keys, values):
    d_k = keys.shape[-1]
    scores = queries @ keys.T / np.sqrt(d_k)  # (tokens, tokens)
    scores -= scores.max(axis=-1, keepdims=True)  # same softmax, no overflow
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)  # each row now sums to 1
    return weights @ values, weights


gen = np.random.default_rng(seed=7)
queries, keys, values = gen.standard_normal((3, 4, 8))  # 4 tokens, d = 8 each
mixed, weights = scaled_dot_product_attention(queries, keys, values)
print(mixed.shape, weights.shape, weights.sum(axis=-1).round(6).tolist())


def layer_norm(x, gamma=1.0, beta=0.0, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred**2).mean(axis=-1, keepdims=True)  # divide by d, not d - 1
    return gamma * centred / np.sqrt(variance + eps) + beta


normed = layer_norm(np.array([2.0, 4.0, 6.0, 8.0]))
print(normed.round(3).tolist(), abs(normed.mean()).round(6), normed.std().round(3))


def adam(grad, theta, steps, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8):
    m = v = 0.0
    for t in range(1, steps + 1):
        g = grad(theta)
        m = beta1 * m + (1 - beta1) * g  # running mean of gradients
        v = beta2 * v + (1 - beta2) * g**2  # running mean of squared gradients
        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)  # undo the pull to 0
        theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
    return theta


# The loss is theta squared, so the gradient is 2 * theta and the minimum sits at 0.
print(round(adam(lambda theta: 2 * theta, theta=3.0, steps=200), 4))

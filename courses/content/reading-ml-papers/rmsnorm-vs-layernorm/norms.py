import numpy as np


def layer_norm(x, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps)


def rms_norm(x, eps=1e-5):
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)


x = np.array([2.0, 4.0, 6.0, 8.0])
for name, norm in [("layer", layer_norm), ("rms  ", rms_norm)]:
    print(name, norm(x).round(3).tolist(), norm(x + 10).round(3).tolist())

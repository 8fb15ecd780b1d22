import numpy as np


def rope(x, pos, base=10000.0):
    d = x.shape[-1]
    freqs = base ** (-np.arange(0, d, 2) / d)
    theta = np.concatenate([pos * freqs, pos * freqs])
    first, second = x[: d // 2], x[d // 2 :]
    swapped = np.concatenate([-second, first])
    return x * np.cos(theta) + swapped * np.sin(theta)


rng = np.random.default_rng(1)
q, k = rng.standard_normal(16), rng.standard_normal(16)
near = rope(q, 3) @ rope(k, 1)  # offset 2
far = rope(q, 40) @ rope(k, 38)  # offset 2, much later in the sequence
print("same offset, same score:", bool(np.isclose(near, far)))
print("norm kept:", bool(np.isclose(np.linalg.norm(rope(q, 7)), np.linalg.norm(q))))

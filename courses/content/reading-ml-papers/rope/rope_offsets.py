import numpy as np


def rope(x, position, base=10000.0):
    d = x.shape[-1]
    angles = position * base ** (-np.arange(0, d, 2) / d)  # one angle per pair
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[0::2], x[1::2]
    out = np.empty_like(x)
    out[0::2] = even * cos - odd * sin
    out[1::2] = even * sin + odd * cos
    return out


gen = np.random.default_rng(seed=3)
q, k = gen.standard_normal((2, 8))
for m, n in [(3, 1), (10, 8), (500, 498)]:
    print(m - n, round(float(rope(q, m) @ rope(k, n)), 6))
print(np.allclose(np.linalg.norm(rope(q, 7)), np.linalg.norm(q)))

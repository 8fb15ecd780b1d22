import numpy as np

x = np.array([2.0, 4.0, 6.0, 8.0])
eps = 1e-5
ln = (x - x.mean()) / np.sqrt(x.var() + eps)
rms = x / np.sqrt(np.mean(x**2) + eps)
print("layer norm:", np.round(ln, 3))
print("mean", round(float(ln.mean()), 6) + 0.0, "std", round(float(ln.std()), 3))
print("rms norm:  ", np.round(rms, 3))

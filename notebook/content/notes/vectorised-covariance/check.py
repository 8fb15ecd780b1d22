import numpy as np

rng = np.random.default_rng(4)
X = rng.standard_normal((500, 6))
centred = X - X.mean(axis=0)
cov = centred.T @ centred / (X.shape[0] - 1)
print("shape:", cov.shape)
print("same as np.cov:", bool(np.allclose(cov, np.cov(X, rowvar=False))))
print("symmetric:", bool(np.allclose(cov, cov.T)))

import numpy as np

A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])  # 3 × 2
B = np.array([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]])  # 2 × 3

print(A.T.shape, A.T[1, 2] == A[2, 1])  # transposing swaps the indices

# (3 × 2)(2 × 3) is 3 × 3 and (2 × 3)(3 × 2) is 2 × 2: the shared size is summed away
print((A @ B).shape, (B @ A).shape)

# one entry of A B by hand: row 0 of A against column 2 of B, summed over r
print((A @ B)[0, 2], sum(A[0, r] * B[r, 2] for r in range(2)))

# Hadamard: same shapes in, same shape out, entry by entry
print((A * B.T).tolist())

rng = np.random.default_rng(0)
Q = rng.normal(size=(5, 4))  # 5 tokens, d_k = 4
K = rng.normal(size=(5, 4))
print((Q @ K.T).shape, (Q.T @ K).shape)  # tokens × tokens, then features × features

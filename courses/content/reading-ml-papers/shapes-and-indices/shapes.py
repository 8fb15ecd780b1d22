import numpy as np

scalar = np.float64(3.0)
vector = np.array([1.0, 2.0, 2.0])
matrix = np.arange(6.0).reshape(2, 3)  # 2 rows, 3 columns
batch = np.zeros((4, 5, 8))  # 4 sequences of 5 tokens, 8 features each

for name, a in [("scalar", scalar), ("vector", vector), ("matrix", matrix), ("batch", batch)]:
    print(name, a.ndim, a.shape)

# X_ij is row i, column j; numpy counts from 0 where papers usually count from 1
print(matrix[1, 2], matrix[0].tolist(), matrix[:, 1].tolist())

# a sum over the index i: the length of a vector
print(np.sqrt(sum(vector[i] ** 2 for i in range(3))), np.linalg.norm(vector))

# the axis you sum over is the axis that disappears
print(matrix.sum(axis=0).tolist(), matrix.sum(axis=1).tolist(), batch.mean(axis=-1).shape)

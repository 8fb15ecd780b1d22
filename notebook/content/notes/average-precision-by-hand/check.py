import numpy as np


def average_precision(recall, precision):
    r = np.concatenate(([0.0], recall, [1.0]))
    p = np.concatenate(([0.0], precision, [0.0]))
    p = np.maximum.accumulate(p[::-1])[::-1]  # precision envelope, right to left
    step = np.flatnonzero(r[1:] != r[:-1])
    return float(np.sum((r[step + 1] - r[step]) * p[step + 1]))


recall = np.array([0.2, 0.4, 0.4, 0.6, 0.8, 1.0])
precision = np.array([1.0, 1.0, 0.67, 0.75, 0.8, 0.71])
print("AP:", round(average_precision(recall, precision), 4))

import numpy as np


def log_softmax(z):
    c = z.max(axis=-1, keepdims=True)  # the log-sum-exp shift
    return z - c - np.log(np.exp(z - c).sum(axis=-1, keepdims=True))


z = np.array([1000.0, 999.0, 990.0])
with np.errstate(over="ignore", invalid="ignore"):
    naive = np.log(np.exp(z) / np.exp(z).sum())  # exp(1000) is inf, and inf / inf is nan
print(naive.tolist())
print(log_softmax(z).round(4).tolist())

logits = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]])  # 2 examples, 3 classes
target = np.array([0, 1])
rows = np.arange(len(target))
loss = -log_softmax(logits)[rows, target].mean()
print(round(float(loss), 4))

p = np.exp(log_softmax(logits))
grad = (p - np.eye(3)[target]) / len(target)  # softmax minus one-hot, averaged over rows
print(grad.round(4).tolist())

h = 1e-6  # nudge one logit and watch the loss move
nudged = logits.copy()
nudged[0, 2] += h
slope = (-log_softmax(nudged)[rows, target].mean() - loss) / h
print(round(float(slope), 4), round(float(grad[0, 2]), 4))

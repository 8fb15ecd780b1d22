import numpy as np


def softmax(logits, temperature=1.0):
    z = np.asarray(logits, dtype=float) / temperature
    z -= z.max()  # shifting every logit by the same amount changes nothing
    e = np.exp(z)
    return e / e.sum()


logits = [2.0, 1.0, 0.1]
for temperature in (0.5, 1.0, 5.0):
    print(temperature, softmax(logits, temperature).round(3).tolist())

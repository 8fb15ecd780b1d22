import numpy as np


def train(theta, grad, steps, lr, wd, decoupled, b1=0.9, b2=0.999, eps=1e-8):
    m = v = 0.0
    for t in range(1, steps + 1):
        g = grad(theta)
        if decoupled:
            theta = theta - lr * wd * theta  # AdamW: shrink θ itself, outside the averages
        else:
            g = g + wd * theta  # Adam with L2: the decay joins the gradient
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
    return theta


def no_gradient(theta):  # a weight the loss does not care about
    return 0.0


for wd in (0.01, 0.1):
    l2 = train(1.0, no_gradient, 50, 0.01, wd, decoupled=False)
    adamw = train(1.0, no_gradient, 50, 0.01, wd, decoupled=True)
    print(wd, round(float(l2), 4), round(float(adamw), 4), round((1 - 0.01 * wd) ** 50, 4))


def bowl(theta):  # the gradient of theta squared
    return 2 * theta


print(round(float(train(3.0, bowl, 200, 0.1, 0.0, decoupled=True)), 4))
print(round(float(train(3.0, bowl, 200, 0.1, 0.1, decoupled=True)), 4))

"""The mathematics of the widgets, in plain numpy (float64, vectorised, no Django).

The public API below is fixed: other code and checks rely on these names and meanings.

    softmax(x, axis=-1, temperature=1.0)
    causal_mask(n)
    attention(Q, K, V, mask=None, temperature=1.0) -> (out, weights)
    layer_norm(x, gamma=1.0, beta=0.0, eps=1e-5)
    rms_norm(x, gamma=1.0, eps=1e-5)
    adam(grad, theta0, steps, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8, bias_correction=True)
    rope(x, positions=None, base=10000.0)
    log_softmax(x, axis=-1, temperature=1.0)
    cross_entropy(logits, target, axis=-1)
    multi_head_attention(x, w_q, w_k, w_v, w_o, heads, mask=None) -> (out, weights)
    adamw(grad, theta0, steps, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01)

A few helpers the widgets also need (``attention_scores``, ``entropy``, ``sgd``) live here too,
so that every formula on the site is computed in one place.

Numerical policy: inputs with NaN or +inf, fully masked softmax rows and overflowing scores raise
``ValueError`` with a message that says what is wrong; nothing returns NaN silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = [
    "adam",
    "adamw",
    "attention",
    "attention_scores",
    "causal_mask",
    "cross_entropy",
    "entropy",
    "layer_norm",
    "log_softmax",
    "multi_head_attention",
    "rms_norm",
    "rope",
    "sgd",
    "softmax",
]


def _array(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must contain only finite numbers (no NaN or infinity)")
    return arr


def _positive(value: float, name: str) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number greater than 0, got {value!r}")
    return value


def softmax(x, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """exp(x / τ) normalised along ``axis``; -inf entries (masked) get weight 0.

    The maximum is subtracted before dividing by τ, so no logit, however large, overflows; a
    slice that is entirely -inf (every position masked) has no distribution and raises.
    """
    shifted = _shifted_logits(x, axis, temperature)
    if shifted.size == 0:
        return shifted
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """log softmax(x / τ) along ``axis``, computed without forming the probabilities.

    Same input rules as :func:`softmax`; masked (-inf) entries give -inf.
    """
    shifted = _shifted_logits(x, axis, temperature)
    if shifted.size == 0:
        return shifted
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _shifted_logits(x, axis: int, temperature: float) -> np.ndarray:
    """(x − max x) / τ along ``axis``: every entry ≤ 0, the largest exactly 0."""
    z = np.asarray(x, dtype=np.float64)
    t = _positive(temperature, "temperature")
    if np.isnan(z).any() or np.isposinf(z).any():
        raise ValueError("softmax logits must not contain NaN or +infinity")
    if z.size == 0:
        return z.copy()
    top = z.max(axis=axis, keepdims=True)
    if np.isneginf(top).any():
        raise ValueError("softmax over a row whose entries are all -inf (every position masked)")
    # z - top <= 0; dividing by t keeps the sign (a difference of two huge logits may round to
    # -inf, whose exponential is a correct 0).
    with np.errstate(over="ignore"):
        return (z - top) / t


def cross_entropy(logits, target, axis: int = -1) -> float:
    """Mean over rows of −log softmax(logits)[target]: logits (n, C), target whole numbers (n,).

    ``axis`` is the class axis of ``logits``; every other axis holds rows, matched by ``target``.
    """
    logits = _array(logits, "logits")
    if logits.ndim < 1:
        raise ValueError("logits need a class axis")
    classes = np.moveaxis(logits, axis, -1)
    t = np.asarray(target)
    if t.dtype == bool or not np.issubdtype(t.dtype, np.integer):
        raise ValueError("target must hold whole numbers (class indices)")
    if t.shape != classes.shape[:-1]:
        raise ValueError(
            f"target of shape {t.shape} does not match the rows of logits {classes.shape[:-1]}"
        )
    n_classes = classes.shape[-1]
    if n_classes == 0 or t.size == 0:
        raise ValueError("cross_entropy needs at least one row and one class")
    if (t < 0).any() or (t >= n_classes).any():
        raise ValueError(f"every target must be a class index from 0 to {n_classes - 1}")
    picked = np.take_along_axis(log_softmax(classes, axis=-1), t[..., None], axis=-1)
    return float(-picked.mean())


def causal_mask(n: int) -> np.ndarray:
    """(n, n) additive mask: 0 on and below the diagonal, -inf above (no peeking ahead)."""
    n = int(n)
    if n < 0:
        raise ValueError("causal_mask size must be >= 0")
    return np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, 0.0)


def attention_scores(Q, K, temperature: float = 1.0) -> np.ndarray:
    """Q Kᵀ / √d_k / τ over the last two axes (leading axes broadcast)."""
    Q = _array(Q, "Q")
    K = _array(K, "K")
    if Q.ndim < 2 or K.ndim < 2:
        raise ValueError("Q and K must be at least 2-D (tokens × d_k)")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k: got {Q.shape[-1]} and {K.shape[-1]}")
    d_k = Q.shape[-1]
    if d_k == 0:
        raise ValueError("d_k must be at least 1")
    t = _positive(temperature, "temperature")
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (Q @ np.swapaxes(K, -1, -2)) / math.sqrt(d_k) / t
    if not np.isfinite(scores).all():
        raise ValueError("attention scores overflow float64: scale Q or K down, or raise τ")
    return scores


def attention(Q, K, V, mask=None, temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention: (softmax(Q Kᵀ / √d_k / τ + mask) V, weights).

    ``mask`` is either an additive float array (0 keeps, -inf removes) or a boolean array that is
    True where attention is allowed; it broadcasts over the leading (batch, head) axes.
    """
    V = _array(V, "V")
    scores = attention_scores(Q, K, temperature)
    if V.ndim < 2 or V.shape[-2] != scores.shape[-1]:
        raise ValueError(
            f"V must have one row per key: K has {scores.shape[-1]} rows, V has shape {V.shape}"
        )
    if mask is not None:
        m = np.asarray(mask)
        try:
            np.broadcast_shapes(m.shape, scores.shape)
        except ValueError as exc:
            raise ValueError(
                f"mask of shape {m.shape} does not broadcast to the scores' {scores.shape}"
            ) from exc
        if m.dtype == bool:
            scores = np.where(m, scores, -np.inf)
        else:
            m = m.astype(np.float64)
            if np.isnan(m).any() or np.isposinf(m).any():
                raise ValueError("an additive mask may hold finite numbers or -inf only")
            scores = scores + m
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def multi_head_attention(
    x, w_q, w_k, w_v, w_o, heads: int, mask=None
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention of x (T, d_model); returns (out (T, d_model), weights (h, T, T)).

    Each projection is ``x @ w`` with w (d_model, d_model). Head i takes features
    i·d_head … (i+1)·d_head − 1 of Q, K and V (d_head = d_model / heads) and attends with its own
    √d_head; the heads' outputs are joined back in order and projected by ``w_o``. ``mask`` is an
    additive (T, T) mask shared by every head.
    """
    x = _array(x, "x")
    if x.ndim != 2:
        raise ValueError(f"x must be tokens × d_model, got shape {x.shape}")
    T, d_model = x.shape
    if isinstance(heads, bool) or int(heads) != heads or heads < 1 or d_model % heads:
        raise ValueError(f"heads must be a whole number >= 1 dividing d_model = {d_model}")
    heads = int(heads)
    ws = []
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o)):
        w = _array(w, name)
        if w.shape != (d_model, d_model):
            raise ValueError(f"{name} must be d_model × d_model = {d_model} × {d_model}")
        ws.append(w)
    w_q, w_k, w_v, w_o = ws
    if mask is not None and np.shape(mask) != (T, T):
        raise ValueError(f"mask must be tokens × tokens = {T} × {T}, got {np.shape(mask)}")
    d_head = d_model // heads

    def split(m: np.ndarray) -> np.ndarray:  # (T, d_model) -> (heads, T, d_head)
        return m.reshape(T, heads, d_head).transpose(1, 0, 2)

    out, weights = attention(split(x @ w_q), split(x @ w_k), split(x @ w_v), mask=mask)
    joined = out.transpose(1, 0, 2).reshape(T, d_model)
    return joined @ w_o, weights


def entropy(p, axis: int = -1) -> np.ndarray:
    """Shannon entropy −Σ p log p in nats along ``axis`` (0 log 0 = 0)."""
    p = np.asarray(p, dtype=np.float64)
    logs = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logs).sum(axis=axis)


def _scaled(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x divided by its largest magnitude per row, and that magnitude (1 for zero rows).

    Normalising a row is scale-free apart from ε, so working on x / c (entries in [-1, 1]) with
    ε / c² gives the same answer without overflowing x² for huge inputs.
    """
    c = np.abs(x).max(axis=-1, keepdims=True)  # callers ensure the last axis is not empty
    c = np.where(c > 0, c, 1.0)
    return x / c, c


def layer_norm(x, gamma=1.0, beta=0.0, eps: float = 1e-5) -> np.ndarray:
    """γ ⊙ (x − μ) / √(σ² + ε) + β over the last axis, σ² the biased (1/d) variance."""
    x = _array(x, "x")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError("layer_norm needs at least one feature on the last axis")
    eps = _positive(eps, "eps")
    xs, c = _scaled(x)
    centred = xs - xs.mean(axis=-1, keepdims=True)
    var = (centred * centred).mean(axis=-1, keepdims=True)
    with np.errstate(over="ignore", divide="ignore"):
        out = centred / np.sqrt(var + eps / (c * c))
        out = _array(gamma, "gamma") * out + _array(beta, "beta")
    if not np.isfinite(out).all():
        raise ValueError("layer_norm output overflowed: γ or β is too large")
    return out


def rms_norm(x, gamma=1.0, eps: float = 1e-5) -> np.ndarray:
    """x / √(mean(x²) + ε) · γ over the last axis (no centring, no shift)."""
    x = _array(x, "x")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError("rms_norm needs at least one feature on the last axis")
    eps = _positive(eps, "eps")
    xs, c = _scaled(x)
    with np.errstate(over="ignore", divide="ignore"):
        out = xs / np.sqrt((xs * xs).mean(axis=-1, keepdims=True) + eps / (c * c))
        out = out * _array(gamma, "gamma")
    if not np.isfinite(out).all():
        raise ValueError("rms_norm output overflowed: γ is too large")
    return out


def _check_optimiser(steps: int, lr: float) -> int:
    if isinstance(steps, bool) or int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be a whole number >= 0, got {steps!r}")
    _positive(lr, "lr")
    return int(steps)


def adam(
    grad: Callable,
    theta0,
    steps: int,
    lr: float = 0.001,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    bias_correction: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run Adam from ``theta0``; return the arrays theta, m, v of length steps + 1 (row 0 = start).

    m_t = β1 m_{t−1} + (1 − β1) g_t, v_t = β2 v_{t−1} + (1 − β2) g_t², and
    θ_t = θ_{t−1} − η m̂_t / (√v̂_t + ε) with m̂, v̂ divided by (1 − β^t) when ``bias_correction``.
    A scalar θ runs on Python floats (the loop over steps is the only loop, and it is cheap).
    """
    return _adam(grad, theta0, steps, lr, beta1, beta2, eps, bias_correction, 0.0, "Adam")


def adamw(
    grad: Callable,
    theta0,
    steps: int,
    lr: float = 0.001,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 0.01,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AdamW: as :func:`adam` (with bias correction), with decoupled weight decay.

    Each step first shrinks θ by η · weight_decay · θ, then takes the Adam step with the gradient
    at the step's starting θ; the decay never passes through m and v, unlike an L2 term in g.
    """
    wd = float(weight_decay)
    if not (math.isfinite(wd) and wd >= 0.0):
        raise ValueError(f"weight_decay must be a finite number >= 0, got {weight_decay!r}")
    return _adam(grad, theta0, steps, lr, beta1, beta2, eps, True, wd, "AdamW")


def _adam(
    grad: Callable,
    theta0,
    steps: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    bias_correction: bool,
    weight_decay: float,
    label: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Adam recursion shared by :func:`adam` and :func:`adamw` (weight_decay 0 for Adam)."""
    steps = _check_optimiser(steps, lr)
    for name, b in (("beta1", beta1), ("beta2", beta2)):
        if not (math.isfinite(b) and 0.0 <= b < 1.0):
            raise ValueError(f"{name} must be in [0, 1), got {b!r}")
    eps = _positive(eps, "eps")
    start = _array(theta0, "theta0")
    ts = np.arange(1, steps + 1, dtype=np.float64)
    if bias_correction:
        c1 = 1.0 - np.power(beta1, ts)
        c2 = 1.0 - np.power(beta2, ts)
    else:
        c1 = c2 = np.ones(steps)
    a1, a2 = 1.0 - beta1, 1.0 - beta2
    keep = 1.0 - lr * weight_decay  # decoupled decay: θ shrinks before each Adam step
    if start.ndim == 0:
        # Scalar θ: Python floats are ~20x cheaper per operation than 0-d numpy arrays.
        th, m, v = float(start), 0.0, 0.0
        thetas, ms, vs = [th], [0.0], [0.0]
        sqrt = math.sqrt
        step_sizes = (lr / c1).tolist()  # η / (1 − β1^t)
        inv_c2 = (1.0 / c2).tolist()  # 1 / (1 − β2^t)
        keep_theta, keep_m, keep_v = thetas.append, ms.append, vs.append
        for s1, r2 in zip(step_sizes, inv_c2, strict=True):
            g = grad(th)
            m = beta1 * m + a1 * g
            v = beta2 * v + a2 * g * g
            th = keep * th - s1 * m / (sqrt(v * r2) + eps)
            keep_theta(th)
            keep_m(m)
            keep_v(v)
        out = (
            np.array(thetas, dtype=np.float64),
            np.array(ms, dtype=np.float64),
            np.array(vs, dtype=np.float64),
        )
    else:
        thetas = np.empty((steps + 1, *start.shape))
        ms = np.zeros_like(thetas)
        vs = np.zeros_like(thetas)
        thetas[0] = start
        for t in range(1, steps + 1):
            g = np.asarray(grad(thetas[t - 1]), dtype=np.float64)
            if not np.isfinite(g).all():
                raise ValueError(f"the gradient is not finite at step {t}")
            ms[t] = beta1 * ms[t - 1] + a1 * g
            vs[t] = beta2 * vs[t - 1] + a2 * g * g
            m_hat, v_hat = ms[t] / c1[t - 1], vs[t] / c2[t - 1]
            thetas[t] = keep * thetas[t - 1] - lr * m_hat / (np.sqrt(v_hat) + eps)
        out = thetas, ms, vs
    for name, arr in zip(("θ", "m", "v"), out, strict=True):
        if not np.isfinite(arr).all():
            bad = int(np.argmin(np.isfinite(arr).reshape(steps + 1, -1).all(axis=1)))
            raise ValueError(f"{label}'s {name} stopped being finite at step {bad}")
    return out


def sgd(grad: Callable, theta0: float, steps: int, lr: float, limit: float = 1e12) -> np.ndarray:
    """Plain gradient descent θ_t = θ_{t−1} − η g on a scalar; stops early once |θ| > limit.

    The result has steps + 1 entries, or fewer when the run diverged (its last entry is then the
    first θ past the limit), so the caller can say "diverged at step k" instead of plotting inf.
    """
    steps = _check_optimiser(steps, lr)
    th = float(_array(theta0, "theta0"))
    thetas = [th]
    for _ in range(steps):
        th = th - lr * float(grad(th))
        thetas.append(th)
        if not abs(th) <= limit:  # also catches NaN
            break
    return np.array(thetas)


def optimiser_paths(
    grad: Callable,
    theta0: float,
    steps: int,
    lr: float = 0.001,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    sgd_limit: float = 1e12,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """θ for Adam, Adam without bias correction and plain SGD (same η), in one pass over steps.

    Equal to ``adam(...)[0]``, ``adam(..., bias_correction=False)[0]`` and ``sgd(...)`` for a
    scalar θ0, but one loop instead of three and only θ kept (no m and v arrays): what a widget
    that compares the three needs. The SGD path stops early as :func:`sgd` does.
    """
    steps = _check_optimiser(steps, lr)
    for name, b in (("beta1", beta1), ("beta2", beta2)):
        if not (math.isfinite(b) and 0.0 <= b < 1.0):
            raise ValueError(f"{name} must be in [0, 1), got {b!r}")
    eps = _positive(eps, "eps")
    start = _array(theta0, "theta0")
    if start.ndim != 0:
        raise ValueError(f"theta0 must be a single number here, got shape {start.shape}")
    ts = np.arange(1, steps + 1, dtype=np.float64)
    step_sizes = (lr / (1.0 - np.power(beta1, ts))).tolist()  # η / (1 − β1^t)
    inv_c2 = (1.0 / (1.0 - np.power(beta2, ts))).tolist()  # 1 / (1 − β2^t)
    a1, a2, sqrt = 1.0 - beta1, 1.0 - beta2, math.sqrt
    bc = raw = plain = float(start)
    m_bc = v_bc = m_raw = v_raw = 0.0
    bcs, raws, plains = [bc], [raw], [plain]
    keep_bc, keep_raw, keep_plain = bcs.append, raws.append, plains.append
    sgd_running = True
    for s1, r2 in zip(step_sizes, inv_c2, strict=True):
        g = grad(bc)
        m_bc = beta1 * m_bc + a1 * g
        v_bc = beta2 * v_bc + a2 * g * g
        bc = bc - s1 * m_bc / (sqrt(v_bc * r2) + eps)
        keep_bc(bc)
        g = grad(raw)
        m_raw = beta1 * m_raw + a1 * g
        v_raw = beta2 * v_raw + a2 * g * g
        raw = raw - lr * m_raw / (sqrt(v_raw) + eps)
        keep_raw(raw)
        if sgd_running:
            plain = plain - lr * float(grad(plain))
            keep_plain(plain)
            sgd_running = abs(plain) <= sgd_limit  # also stops on NaN
    out = (np.array(bcs), np.array(raws), np.array(plains))
    for label, arr in (("Adam", out[0]), ("Adam without bias correction", out[1])):
        if not np.isfinite(arr).all():
            raise ValueError(
                f"{label}'s θ stopped being finite at step {int(np.argmin(np.isfinite(arr)))}"
            )
    return out


def _rotate_half(x: np.ndarray) -> np.ndarray:
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope(x, positions=None, base: float = 10000.0) -> np.ndarray:
    """Rotary position embedding, rotate-half form, on the last axis of x (..., T, d), d even.

    Feature i is paired with i + d/2 and the pair is rotated by the angle p · base^(−2i/d), so
    ⟨rope(q, m), rope(k, n)⟩ depends on n − m only. ``positions`` defaults to 0 … T − 1.
    """
    x = _array(x, "x")
    if x.ndim < 1 or x.shape[-1] == 0 or x.shape[-1] % 2:
        raise ValueError(f"rope needs an even, non-zero last axis, got shape {x.shape}")
    base = _positive(base, "base")
    d = x.shape[-1]
    if positions is None:
        if x.ndim < 2:
            raise ValueError("a single vector needs explicit positions")
        pos = np.arange(x.shape[-2], dtype=np.float64)
    else:
        pos = _array(positions, "positions")
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)
    angles = pos[..., None] * inv_freq  # (..., T, d/2)
    angles = np.concatenate([angles, angles], axis=-1)  # (..., T, d)
    return x * np.cos(angles) + _rotate_half(x) * np.sin(angles)

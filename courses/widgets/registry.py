"""The widget registry: for each widget key, its form, its numbers and how they are presented.

A widget's work splits in two: ``numbers`` does the numpy work (through :mod:`.kernels`) on the
cleaned form data, ``present`` turns those numbers into the tables, plots and sentences of the
template. :func:`run_widget` validates a query against the widget's form and builds the template
context; the view (:mod:`.views`) and the chapter embed (``{% widget_embed %}``) both use it.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django import forms
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from courses.widgets import kernels
from courses.widgets.figures import (
    bar_chart,
    cells,
    heat_class,
    heat_map,
    line_plot,
    matrix_table,
    num,
)
from courses.widgets.forms import (
    ADAMW_OBJECTIVES,
    MAX_DIM,
    TOO_LARGE,
    AdamForm,
    AdamWForm,
    AttentionForm,
    CrossEntropyForm,
    MultiHeadForm,
    NormsForm,
    RopeForm,
    SoftmaxForm,
    form_errors,
    too_large,
)
from platform.rendering import render_math


def numbers_attention(d: dict) -> dict:
    T, d_k, d_v, tau = d["tokens"], d["d_k"], d["d_v"], d["temperature"]
    rng = np.random.default_rng(d["seed"])
    # Drawn in this order so that d_k = d_v = 8, 4 tokens, seed 0 gives the seed chapter's
    # Q, K, V = default_rng(0).normal(size=(3, 4, 8)).
    Q = np.array(d["q"]) if d.get("q") is not None else rng.normal(size=(T, d_k))
    K = np.array(d["k"]) if d.get("k") is not None else rng.normal(size=(T, d_k))
    V = np.array(d["v"]) if d.get("v") is not None else rng.normal(size=(T, d_v))
    mask = kernels.causal_mask(T) if d["causal"] else None
    scores = kernels.attention_scores(Q, K, tau)
    if mask is not None:
        scores = scores + mask
    out, weights = kernels.attention(Q, K, V, mask=mask, temperature=tau)

    # Why √d_k: mean row entropy of softmax(q·k / τ) with and without the divisor, as d_k grows.
    dims = sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, d_k} & set(range(1, MAX_DIM + 1)))
    # One draw at the widest d_k; each narrower d_k uses its first columns. All softmaxes of
    # the sweep run as one batched call over a (2, len(dims), T, T) array.
    q_all, k_all = np.random.default_rng(d["seed"]).normal(size=(2, T, max(dims)))
    raw = np.stack([q_all[:, :dim] @ k_all[:, :dim].T for dim in dims])
    scale = np.sqrt(np.array(dims, dtype=np.float64))[:, None, None]
    both = np.stack([raw / scale, raw]) + (mask if mask is not None else 0.0)
    ent = kernels.entropy(kernels.softmax(both, temperature=tau)).mean(axis=-1)  # (2, dims)
    spread = raw.reshape(len(dims), -1).std(axis=1)
    entropy_rows = [
        {
            "d_k": dim,
            "current": dim == d_k,
            "with": float(ent[0, i]),
            "without": float(ent[1, i]),
            "score_std": float(spread[i]),
        }
        for i, dim in enumerate(dims)
    ]
    return {
        "scores": scores,
        "weights": weights,
        "out": out,
        "entropy_rows": entropy_rows,
        "mask": np.isneginf(mask) if mask is not None else None,  # True where masked out
    }


# Beyond this many tokens a matrix is a heat map plus its first rows as numbers, with every
# number in a CSV download: 64 × 64 weights as a table were most of a 216 KB answer per keystroke.
ROWS_SHOWN = 16


def present_attention(d: dict, n: dict) -> dict:
    T, d_k, d_v = d["tokens"], d["d_k"], d["d_v"]
    sums = n["weights"].sum(axis=-1)
    return {
        "shapes": [
            (render_math("Q"), f"{T} × {d_k}"),
            (render_math("K"), f"{T} × {d_k}"),
            (render_math("V"), f"{T} × {d_v}"),
            (format_html("{} (scores)", render_math(r"QK^\top / \sqrt{d_k}")), f"{T} × {T}"),
            (
                format_html("weights = {}", render_math(r"\operatorname{softmax}(\text{scores})")),
                f"{T} × {T}",
            ),
            (format_html("output = weights {}", render_math("V")), f"{T} × {d_v}"),
        ],
        "scores_table": matrix_table(
            n["scores"],
            format_html("Scores {}", render_math(r"QK^\top / \sqrt{d_k} / \tau")),
            digits=2,
            mask=n["mask"],
            max_rows=ROWS_SHOWN,
            max_cols=ROWS_SHOWN,
        ),
        "weights_table": matrix_table(
            n["weights"],
            "Attention weights (darker = more weight); each row sums to 1",
            heat=True,
            row_sums=sums,
            css="matrix heatmap",
            mask=n["mask"],
            max_rows=ROWS_SHOWN,
            max_cols=ROWS_SHOWN,
        ),
        "weights_map": heat_map(
            n["weights"], title=f"All {T} × {T} attention weights, darker = more", mask=n["mask"]
        )
        if T > ROWS_SHOWN
        else "",
        "output_table": matrix_table(
            n["out"],
            format_html("Output = weights · {}", render_math("V")),
            max_rows=ROWS_SHOWN,
            max_cols=ROWS_SHOWN,
        ),
        "row_sums_ok": bool(np.allclose(sums, 1.0)),
        "entropy_rows": n["entropy_rows"],
        "max_entropy": math.log(T),
        "tokens": T,
        "temperature": d["temperature"],
        "typed": [name.upper() for name in ("q", "k", "v") if d.get(name) is not None],
    }


def _SUB_DIGITS(i: int) -> str:
    return str(i).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


SOFTMAX_SWEEP = (0.05, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0)


def numbers_softmax(d: dict) -> dict:
    x = np.array(d["logits"], dtype=np.float64)
    p = kernels.softmax(x, temperature=d["temperature"])
    sweep = kernels.softmax(x[None, :] / np.array(SOFTMAX_SWEEP)[:, None])
    return {"x": x, "p": p, "sweep": sweep, "entropy": float(kernels.entropy(p))}


def present_softmax(d: dict, n: dict) -> dict:
    x, p, tau = n["x"], n["p"], d["temperature"]
    labels = [f"x{_SUB_DIGITS(i)}" for i in range(len(x))]  # SVG text: Unicode subscripts
    return {
        "rows": [
            {"i": i, "logit": num(float(v), 3), "p": num(float(q), 4), "heat": heat_class(q)}
            for i, (v, q) in enumerate(zip(x.tolist(), p.tolist(), strict=True))
        ],
        "bars": bar_chart(p.tolist(), labels, title=f"softmax probabilities at τ = {tau:g}"),
        "entropy": n["entropy"],
        "max_entropy": math.log(len(x)),
        "argmax": int(np.argmax(x)),
        "argmax_symbol": render_math(f"x_{{{int(np.argmax(x))}}}"),
        "top": float(p.max()),
        "temperature": tau,
        "sweep": [
            {"tau": t, "cells": [(num(q, 3), heat_class(q)) for q in row]}
            for t, row in zip(SOFTMAX_SWEEP, n["sweep"].tolist(), strict=True)
        ],
        "labels": [f"x_{{{i}}}" for i in range(len(x))],  # LaTeX, typeset in the table
    }


def _stats(v: np.ndarray) -> dict[str, str]:
    return {
        "mean": num(float(v.mean()), 4),
        "std": num(float(v.std()), 4),
        "rms": num(float(np.sqrt((v * v).mean())), 4),
    }


def numbers_norms(d: dict) -> dict:
    x = np.array(d["x"], dtype=np.float64)
    return {
        "x": x,
        "ln": kernels.layer_norm(x, gamma=d["gamma"], beta=d["beta"], eps=d["eps"]),
        "rms": kernels.rms_norm(x, gamma=d["gamma"], eps=d["eps"]),
    }


def present_norms(d: dict, n: dict) -> dict:
    x, ln, rms = n["x"], n["ln"], n["rms"]
    cols = cells(np.stack([ln, rms], axis=1), 4)
    return {
        "rows": [
            {"i": i, "x": num(a, 3), "ln": b, "rms": c}
            for i, (a, (b, c)) in enumerate(zip(x.tolist(), cols, strict=True))
        ],
        "stats": {"x": _stats(x), "ln": _stats(ln), "rms": _stats(rms)},
        "centred": abs(float(x.mean())) < 1e-12,
    }


GRADIENTS: dict[str, Callable[[float], float]] = {
    "square": lambda th: 2.0 * th,
    "quartic": lambda th: 4.0 * th * th * th,
    "flat": lambda th: 0.0 * th,
}
OBJECTIVE_TEX = {  # OBJECTIVES as LaTeX, typeset in the widget's sentences
    "square": (r"f(\theta) = \theta^2", r"2\theta"),
    "quartic": (r"f(\theta) = \theta^4", r"4\theta^3"),
}
TABLE_STEPS = (0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)


def numbers_adam(d: dict) -> dict:
    grad = GRADIENTS[d["objective"]]
    args = {"lr": d["lr"], "beta1": d["beta1"], "beta2": d["beta2"], "eps": d["eps"]}
    corrected, raw, plain = kernels.optimiser_paths(grad, d["theta0"], d["steps"], **args)
    return {"corrected": corrected, "raw": raw, "plain": plain}


def present_adam(d: dict, n: dict) -> dict:
    steps, theta0 = d["steps"], d["theta0"]
    corrected, raw, plain = n["corrected"], n["raw"], n["plain"]
    sgd_diverged = len(plain) < steps + 1
    reach = max(abs(theta0), float(np.abs(corrected).max()), float(np.abs(raw).max()), 1e-3)
    y_hi = reach * 1.1
    series = [
        ("Adam with bias correction", "line-adam", corrected),
        ("Adam without bias correction", "line-raw", raw),
        ("SGD (same η)", "line-sgd", plain),
    ]
    table_steps = sorted({s for s in TABLE_STEPS if s <= steps} | {steps})
    first_bc = corrected[1] - corrected[0]
    first_raw = raw[1] - raw[0]

    def at(values: np.ndarray, s: int) -> str:
        return num(float(values[s]), 4) if s < len(values) else "diverged"

    return {
        "plot": line_plot(
            series,
            title=f"θ over {steps} steps of Adam (with and without bias correction) and SGD",
            x_max=steps,
            y_lo=-y_hi,
            y_hi=y_hi,
        ),
        "series": [(label, css) for label, css, _ in series],
        "table": [
            {"step": s, "bc": at(corrected, s), "raw": at(raw, s), "sgd": at(plain, s)}
            for s in table_steps
        ],
        "final": {
            "bc": num(float(corrected[-1]), 4),
            "raw": num(float(raw[-1]), 4),
            "sgd": "diverged" if sgd_diverged else num(float(plain[-1]), 4),
        },
        "sgd_diverged_at": len(plain) - 1 if sgd_diverged else None,
        "first_step": {
            "bc": num(float(first_bc), 6),
            "raw": num(float(first_raw), 6),
            "ratio": num(float(first_raw / first_bc), 3) if first_bc else "—",
            "predicted": num((1 - d["beta1"]) / math.sqrt(1 - d["beta2"]), 3),
        },
        "objective": OBJECTIVE_TEX[d["objective"]],
        "steps": steps,
    }


def numbers_rope(d: dict) -> dict:
    d_k, base, heads = d["d_k"], d["base"], d["heads"]
    positions = np.array(d["positions"], dtype=np.float64)
    P = len(positions)
    rng = np.random.default_rng(d["seed"])
    q, k = rng.normal(size=(2, heads * d_k))
    # Right: split into heads first, then rotate each head's d_k features.
    qh, kh = q.reshape(heads, d_k)[0], k.reshape(heads, d_k)[0]
    rq = kernels.rope(np.broadcast_to(qh, (P, d_k)), positions, base)
    rk = kernels.rope(np.broadcast_to(kh, (P, d_k)), positions, base)
    # Wrong: rotate the whole d_model vector, then split; pairs (i, i + d_model/2) straddle heads.
    wq = kernels.rope(np.broadcast_to(q, (P, heads * d_k)), positions, base)
    wk = kernels.rope(np.broadcast_to(k, (P, heads * d_k)), positions, base)
    norms = np.linalg.norm(rq, axis=-1)
    return {
        "right": rq @ rk.T,  # (P, P): ⟨rope(q, m), rope(k, n)⟩ for head 0
        "wrong": wq[:, :d_k] @ wk[:, :d_k].T,
        "plain": float(qh @ kh),
        "norm_q": float(np.linalg.norm(qh)),
        "norm_spread": float(norms.max() - norms.min()),
    }


def present_rope(d: dict, n: dict) -> dict:
    d_k, base, heads = d["d_k"], d["base"], d["heads"]
    right, wrong = n["right"].tolist(), n["wrong"].tolist()
    pos = [int(p) for p in d["positions"]]
    pairs = []
    by_offset: dict[int, list[tuple[float, float]]] = {}
    for a, m in enumerate(pos):
        for b, nn in enumerate(pos):
            if nn < m:
                continue
            off = nn - m
            r, w = right[a][b], wrong[a][b]
            pairs.append({"m": m, "n": nn, "offset": off, "right": num(r, 6), "wrong": num(w, 6)})
            by_offset.setdefault(off, []).append((r, w))
    pairs.sort(key=lambda row: (row["offset"], row["m"]))
    offsets = [
        {
            "offset": off,
            "count": len(vals),
            "right_spread": f"{max(v[0] for v in vals) - min(v[0] for v in vals):.1e}",
            "wrong_spread": f"{max(v[1] for v in vals) - min(v[1] for v in vals):.3f}",
        }
        for off, vals in sorted(by_offset.items())
    ]
    return {
        "pairs": pairs,
        "offsets": offsets,
        "plain": num(n["plain"], 6),
        "norm_q": num(n["norm_q"], 6),
        "norm_spread": f"{n['norm_spread']:.1e}",
        "d_model": heads * d_k,
        "heads": heads,
        "d_k": d_k,
        "freqs": [num(float(base ** (-2 * i / d_k)), 5) for i in range(min(d_k // 2, 8))],
    }


def numbers_cross_entropy(d: dict) -> dict:
    z = np.array(d["logits"], dtype=np.float64)
    y = d["target"]
    p = kernels.softmax(z)
    one_hot = np.zeros_like(z)
    one_hot[y] = 1.0
    return {
        "z": z,
        "p": p,
        "log_p": kernels.log_softmax(z),
        "loss": kernels.cross_entropy(z[None, :], np.array([y])),
        "grad": p - one_hot,  # ∂ℒ/∂z for one example
    }


def present_cross_entropy(d: dict, n: dict) -> dict:
    z, p, log_p, grad = n["z"], n["p"], n["log_p"], n["grad"]
    y = d["target"]
    labels = [f"z{i}" for i in range(len(z))]
    return {
        "rows": [
            {
                "i": i,
                "target": i == y,
                "logit": num(float(z[i]), 3),
                "p": num(float(p[i]), 4),
                "heat": heat_class(float(p[i])),
                "log_p": num(float(log_p[i]), 4),
                "grad": num(float(grad[i]), 4),
            }
            for i in range(len(z))
        ],
        "bars": bar_chart(p.tolist(), labels, title=f"softmax probabilities; the target is z{y}"),
        "loss": num(n["loss"], 4),
        "p_target": num(float(p[y]), 4),
        "target": y,
        "classes": len(z),
        "uniform_loss": num(math.log(len(z)), 4),
        "predicted": int(np.argmax(z)),
        "grad_sum": num(float(grad.sum()), 6),
    }


def numbers_multi_head(d: dict) -> dict:
    T, d_model, h = d["tokens"], d["d_model"], d["heads"]
    rng = np.random.default_rng(d["seed"])
    x = rng.normal(size=(T, d_model))
    w_q, w_k, w_v, w_o = rng.normal(size=(4, d_model, d_model)) / math.sqrt(d_model)
    mask = kernels.causal_mask(T) if d["causal"] else None
    out, weights = kernels.multi_head_attention(x, w_q, w_k, w_v, w_o, heads=h, mask=mask)
    return {"out": out, "weights": weights}


def present_multi_head(d: dict, n: dict) -> dict:
    T, d_model, h = d["tokens"], d["d_model"], d["heads"]
    d_head = d_model // h
    weights = n["weights"]
    sums = weights.sum(axis=-1)
    return {
        "shapes": [
            ("X", f"{T} × {d_model}"),
            ("W^Q, W^K, W^V, W^O", f"{d_model} × {d_model} each"),
            ("one head's Q, K, V", f"{T} × {d_head}"),
            ("one head's weights", f"{T} × {T}"),
            ("all weights", f"{h} × {T} × {T}"),
            ("Concat(heads) W^O", f"{T} × {d_model}"),
        ],
        "heads": [
            {
                "i": i + 1,
                "table": matrix_table(
                    weights[i],
                    f"Head {i + 1}: columns {i * d_head}–{(i + 1) * d_head - 1} of Q, K and V",
                    heat=True,
                    row_sums=sums[i],
                    css="matrix heatmap",
                    digits=2,
                ),
            }
            for i in range(h)
        ],
        "output_table": matrix_table(n["out"], "Output = Concat(heads) · W^O", max_cols=16),
        "row_sums_ok": bool(np.allclose(sums, 1.0)),
        "tokens": T,
        "heads_count": h,
        "d_head": d_head,
        "d_model": d_model,
        "parameters": f"{4 * d_model * d_model:,}",
        "causal": d["causal"],
    }


ADAMW_TABLE_STEPS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)


def numbers_adamw(d: dict) -> dict:
    grad = GRADIENTS[d["objective"]]
    lr, wd = d["lr"], d["weight_decay"]
    plain, _m, _v = kernels.adam(grad, d["theta0"], d["steps"], lr=lr)

    def with_l2(th):  # the decay folded into the gradient, as before AdamW
        return grad(th) + wd * th

    l2, _m2, _v2 = kernels.adam(with_l2, d["theta0"], d["steps"], lr=lr)
    decoupled, _m3, _v3 = kernels.adamw(grad, d["theta0"], d["steps"], lr=lr, weight_decay=wd)
    return {"plain": plain, "l2": l2, "adamw": decoupled}


def present_adamw(d: dict, n: dict) -> dict:
    steps, theta0, lr, wd = d["steps"], d["theta0"], d["lr"], d["weight_decay"]
    plain, l2, decoupled = n["plain"], n["l2"], n["adamw"]
    reach = max(abs(theta0), *(float(np.abs(a).max()) for a in (plain, l2, decoupled)), 1e-3)
    series = [
        ("Adam (no decay)", "line-adam", plain),
        ("Adam with L2 (λθ added to the gradient)", "line-raw", l2),
        ("AdamW (decoupled decay)", "line-sgd", decoupled),
    ]
    table_steps = sorted({s for s in ADAMW_TABLE_STEPS if s <= steps} | {steps})
    return {
        "plot": line_plot(
            series,
            title=f"θ over {steps} steps: Adam, Adam with L2 and AdamW (λ = {wd:g})",
            x_max=steps,
            y_lo=-reach * 1.1,
            y_hi=reach * 1.1,
        ),
        "series": [(label, css) for label, css, _ in series],
        "table": [
            {
                "step": s,
                "plain": num(float(plain[s]), 4),
                "l2": num(float(l2[s]), 4),
                "adamw": num(float(decoupled[s]), 4),
            }
            for s in table_steps
        ],
        "final": {
            "plain": num(float(plain[-1]), 4),
            "l2": num(float(l2[-1]), 4),
            "adamw": num(float(decoupled[-1]), 4),
        },
        "shrink": num(1.0 - lr * wd, 6),
        "pure_decay": num(theta0 * (1.0 - lr * wd) ** steps, 4),
        "flat": d["objective"] == "flat",
        "objective": ADAMW_OBJECTIVES[d["objective"]],
        "steps": steps,
        "weight_decay": wd,
    }


@dataclass(frozen=True)
class Widget:
    key: str
    title: str
    summary: str
    form: type[forms.Form]
    numbers: Callable[[dict], dict]  # the numpy work
    present: Callable[[dict, dict], dict]  # tables, plots and text from those numbers
    # Matrices offered whole as CSV downloads (?format=csv&matrix=<name>): name -> numbers key.
    downloads: tuple[str, ...] = ()

    def compute(self, data: dict) -> dict:
        return self.present(data, self.numbers(data))

    @property
    def template(self) -> str:
        return f"courses/widgets/{self.key}.html"

    @property
    def result_template(self) -> str:
        return f"{self.template}#result"

    @property
    def url(self) -> str:
        return reverse(f"widgets:{self.key}")


WIDGETS: dict[str, Widget] = {
    w.key: w
    for w in (
        Widget(
            "attention",
            "Scaled dot-product attention",
            "Scores, a weight heatmap with row sums, the output, every shape, and why √d_k.",
            AttentionForm,
            numbers_attention,
            present_attention,
            downloads=("weights", "scores", "out"),
        ),
        Widget(
            "softmax",
            "Softmax with temperature",
            "Move τ from near 0 to large and watch argmax turn into uniform.",
            SoftmaxForm,
            numbers_softmax,
            present_softmax,
        ),
        Widget(
            "norms",
            "Layer norm vs RMS norm",
            "One vector through both; compare their means and spreads.",
            NormsForm,
            numbers_norms,
            present_norms,
        ),
        Widget(
            "adam",
            "Adam, step by step",
            "θ over steps with and without bias correction, next to plain SGD.",
            AdamForm,
            numbers_adam,
            present_adam,
        ),
        Widget(
            "rope",
            "RoPE: only the offset matters",
            "Scores depend on n − m only — unless you rotate before the head split.",
            RopeForm,
            numbers_rope,
            present_rope,
        ),
        Widget(
            "cross-entropy",
            "Cross-entropy and its gradient",
            "Logits and a target class: the loss, the probabilities and softmax − one-hot.",
            CrossEntropyForm,
            numbers_cross_entropy,
            present_cross_entropy,
        ),
        Widget(
            "multi-head",
            "Multi-head attention",
            "Split d_model into heads and see each head's weights side by side.",
            MultiHeadForm,
            numbers_multi_head,
            present_multi_head,
        ),
        Widget(
            "adamw",
            "Adam vs AdamW",
            "Weight decay inside the gradient or decoupled from it, on one plot.",
            AdamWForm,
            numbers_adamw,
            present_adamw,
        ),
    )
}


def defaults(form_class: type[forms.Form]) -> dict[str, Any]:
    """The form's initial values as query data (a checked box is "on", an unchecked one absent)."""
    data: dict[str, Any] = {}
    for name, field in form_class.base_fields.items():
        if isinstance(field, forms.BooleanField):
            if field.initial:
                data[name] = "on"
        elif field.initial is not None:
            data[name] = str(field.initial)
    return data


def bound_form(widget: Widget, request: HttpRequest | None, uid: str) -> forms.Form:
    """The widget's form bound to the query, with defaults for every field it leaves out."""
    data = defaults(widget.form)
    # A log slider sends "<field>_scale" (forms.LogTemperatureSlider) instead of the field.
    names = [*widget.form.base_fields, *(f"{n}_scale" for n in widget.form.base_fields)]
    if request is not None and any(name in request.GET for name in names):
        for name, field in widget.form.base_fields.items():
            if isinstance(field, forms.BooleanField):
                data.pop(name, None)
            if name in request.GET:
                data[name] = request.GET.get(name)
            if f"{name}_scale" in request.GET:
                data[f"{name}_scale"] = request.GET.get(f"{name}_scale")
    return widget.form(data=data, auto_id=f"{uid}-%s")


def widget_csv(widget: Widget, request: HttpRequest) -> tuple[str, int]:
    """One whole matrix of the widget's result as CSV, or a message and 400.

    ``?matrix=<name>`` picks one of ``widget.downloads``; the other parameters are the widget's
    own, validated as for the page (so the caps hold). Full float64 precision, a header row of
    column numbers and a first column of row numbers.
    """
    name = request.GET.get("matrix", "")
    if name not in widget.downloads:
        offered = ", ".join(widget.downloads) or "none"
        return f"matrix must be one of: {offered}.\n", 400
    if too_large(request.META.get("QUERY_STRING", "")):
        return TOO_LARGE + "\n", 400
    form = bound_form(widget, request, f"w-{widget.key}")
    if not form.is_valid():
        return "".join(f"{field}: {message}\n" for field, message in form_errors(form)), 400
    try:
        matrix = np.asarray(widget.numbers(form.cleaned_data)[name], dtype=np.float64)
    except ValueError as exc:
        return f"{exc}\n", 400
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["row", *range(matrix.shape[1])])
    for i, row in enumerate(matrix.tolist()):
        writer.writerow([i, *(repr(v) for v in row)])
    return out.getvalue(), 200


def run_widget(widget: Widget, request: HttpRequest | None, uid: str) -> tuple[dict, int]:
    """Validate the query (defaults for missing fields), compute, and build the context.

    ``request`` None (a chapter embed) computes the defaults. Returns the context and the HTTP
    status: 400 with ``errors`` for a query too large, a form error or input the kernels refuse.
    """
    raw = request.META.get("QUERY_STRING", "") if request is not None else ""
    context: dict[str, Any] = {
        "w": {"key": widget.key, "id": uid, "url": widget.url, "title": widget.title},
        "errors": [],
        "result": None,
    }
    if too_large(raw):
        context["form"] = widget.form(data=defaults(widget.form), auto_id=f"{uid}-%s")
        context["errors"] = [("request", TOO_LARGE)]
        return context, 400
    form = bound_form(widget, request, uid)
    context["form"] = form
    if request is not None and widget.downloads:
        query = request.GET.copy()
        for name in ("format", "matrix"):
            query.pop(name, None)
        context["w"]["query"] = query.urlencode()
    if not form.is_valid():
        context["errors"] = form_errors(form)
        return context, 400
    try:
        context["result"] = widget.compute(form.cleaned_data)
    except ValueError as exc:  # the kernels refuse input they cannot compute honestly
        context["errors"] = [("input", str(exc))]
        return context, 400
    return context, 200

"""The widget registry: for each widget key, its form, its numbers and how they are presented.

A widget's work splits in two: ``numbers`` does the numpy work (through :mod:`.kernels`) on the
cleaned form data, ``present`` turns those numbers into the tables, plots and sentences of the
template. :func:`run_widget` validates a query against the widget's form and builds the template
context; the view (:mod:`.views`) and the chapter embed (``{% widget_embed %}``) both use it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django import forms
from django.http import HttpRequest
from django.urls import reverse

from courses.widgets import kernels
from courses.widgets.figures import bar_chart, cells, heat_class, line_plot, matrix_table, num
from courses.widgets.forms import (
    MAX_DIM,
    OBJECTIVES,
    TOO_LARGE,
    AdamForm,
    AttentionForm,
    NormsForm,
    RopeForm,
    SoftmaxForm,
    form_errors,
    too_large,
)


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
    return {"scores": scores, "weights": weights, "out": out, "entropy_rows": entropy_rows}


def present_attention(d: dict, n: dict) -> dict:
    T, d_k, d_v = d["tokens"], d["d_k"], d["d_v"]
    sums = n["weights"].sum(axis=-1)
    return {
        "shapes": [
            ("Q", f"{T} × {d_k}"),
            ("K", f"{T} × {d_k}"),
            ("V", f"{T} × {d_v}"),
            ("Q Kᵀ / √d_k (scores)", f"{T} × {T}"),
            ("weights = softmax(scores)", f"{T} × {T}"),
            ("output = weights V", f"{T} × {d_v}"),
        ],
        "scores_table": matrix_table(n["scores"], "Scores Q Kᵀ / √d_k / τ", digits=2),
        "weights_table": matrix_table(
            n["weights"],
            "Attention weights (darker = more weight); each row sums to 1",
            heat=True,
            row_sums=sums,
            css="matrix heatmap",
        ),
        "output_table": matrix_table(n["out"], "Output = weights · V", max_cols=16),
        "row_sums_ok": bool(np.allclose(sums, 1.0)),
        "entropy_rows": n["entropy_rows"],
        "max_entropy": math.log(T),
        "tokens": T,
        "temperature": d["temperature"],
        "typed": [name.upper() for name in ("q", "k", "v") if d.get(name) is not None],
    }


SOFTMAX_SWEEP = (0.05, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0)


def numbers_softmax(d: dict) -> dict:
    x = np.array(d["logits"], dtype=np.float64)
    p = kernels.softmax(x, temperature=d["temperature"])
    sweep = kernels.softmax(x[None, :] / np.array(SOFTMAX_SWEEP)[:, None])
    return {"x": x, "p": p, "sweep": sweep, "entropy": float(kernels.entropy(p))}


def present_softmax(d: dict, n: dict) -> dict:
    x, p, tau = n["x"], n["p"], d["temperature"]
    labels = [f"x{i}" for i in range(len(x))]
    return {
        "rows": [
            {"i": i, "logit": num(float(v), 3), "p": num(float(q), 4), "heat": heat_class(q)}
            for i, (v, q) in enumerate(zip(x.tolist(), p.tolist(), strict=True))
        ],
        "bars": bar_chart(p.tolist(), labels, title=f"softmax probabilities at τ = {tau:g}"),
        "entropy": n["entropy"],
        "max_entropy": math.log(len(x)),
        "argmax": int(np.argmax(x)),
        "top": float(p.max()),
        "temperature": tau,
        "sweep": [
            {"tau": t, "cells": [(num(q, 3), heat_class(q)) for q in row]}
            for t, row in zip(SOFTMAX_SWEEP, n["sweep"].tolist(), strict=True)
        ],
        "labels": labels,
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
        "objective": OBJECTIVES[d["objective"]],
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


@dataclass(frozen=True)
class Widget:
    key: str
    title: str
    summary: str
    form: type[forms.Form]
    numbers: Callable[[dict], dict]  # the numpy work
    present: Callable[[dict, dict], dict]  # tables, plots and text from those numbers

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
    data = defaults(widget.form)
    if request is not None and any(name in request.GET for name in widget.form.base_fields):
        for name, field in widget.form.base_fields.items():
            if isinstance(field, forms.BooleanField):
                data.pop(name, None)
            if name in request.GET:
                data[name] = request.GET.get(name)
    form = widget.form(data=data, auto_id=f"{uid}-%s")
    context["form"] = form
    if not form.is_valid():
        context["errors"] = form_errors(form)
        return context, 400
    try:
        context["result"] = widget.compute(form.cleaned_data)
    except ValueError as exc:  # the kernels refuse input they cannot compute honestly
        context["errors"] = [("input", str(exc))]
        return context, 400
    return context, 200

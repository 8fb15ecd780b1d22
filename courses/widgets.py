"""Widget endpoints: small GET forms whose results numpy computes (courses/kernels.py).

One view per URL. A plain GET returns the whole page; an htmx GET (``request.htmx``) returns
the ``#result`` partial of the same template with the same context. Bad input returns the same
template with the errors, status 400. Results are pure functions of the query string, so the
fragments are ``Cache-Control: public`` (full pages carry the visitor's navigation and CSRF token,
so they are ``private``); both ``Vary: HX-Request``.

Benchmark baseline: with the environment variable ``BENCH_NO_COMPUTE=1`` on the server, a
request carrying ``_bench=canned`` validates its form as usual and builds the same tables and
plots, but from numbers computed once per process for that query string: only the numpy work is
taken away (bench/widgets.py).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django import forms
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from courses import kernels
from courses.widget_forms import (
    MAX_DIM,
    MAX_QUERY_FIELDS,
    MAX_QUERY_STRING,
    OBJECTIVES,
    AdamForm,
    AttentionForm,
    NormsForm,
    RopeForm,
    SoftmaxForm,
)
from platform.http import HtmxHttpRequest

FRAGMENT_MAX_AGE = 60 * 60 * 24
PAGE_MAX_AGE = 60


# --- HTML helpers: tables and SVG built in Python (thousands of cells; no inline styles) --------


def _num(x: float, digits: int = 3) -> str:
    """A number for display: fixed digits, a true minus sign, no "−0.000", −∞ for masks."""
    if x == -math.inf:
        return "−∞"
    text = f"{x:.{digits}f}"
    return "0." + "0" * digits if text == "-0." + "0" * digits else text.replace("-", "−")


def heat_class(w: float) -> str:
    """One of ten CSS classes .heat-0 … .heat-9 for a weight in [0, 1] (CSP: no inline style)."""
    return f"heat-{min(9, max(0, int(w * 10)))}"


def _cells(m: np.ndarray, digits: int) -> list[list[str]]:
    """Every entry of m formatted like _num, fast: round first so −0.000 cannot appear."""
    rounded = np.round(m, digits) + 0.0  # -0.0 + 0.0 is +0.0
    spec = f".{digits}f"
    rows = [[format(v, spec) for v in row] for row in rounded.tolist()]
    if (m < 0).any():
        rows = [[c.replace("-", "−").replace("inf", "∞") for c in row] for row in rows]
    return rows


def matrix_table(
    m: np.ndarray,
    caption: str,
    *,
    digits: int = 3,
    heat: bool = False,
    row_sums: np.ndarray | None = None,
    max_cols: int | None = None,
    row_label: str = "token",
    css: str = "matrix",
) -> SafeString:
    cols = m.shape[1]
    shown = cols if max_cols is None else min(cols, max_cols)
    note = f" (first {shown} of {cols} columns)" if shown < cols else ""
    out = [f'<div class="table-scroll"><table class="{css}"><caption>{escape(caption)}{note}'
           "</caption><thead><tr><th scope=\"col\">" + escape(row_label) + "</th>"]  # fmt: skip
    out += [f'<th scope="col">{j}</th>' for j in range(shown)]
    if row_sums is not None:
        out.append('<th scope="col">row sum</th>')
    out.append("</tr></thead><tbody>")
    part = m[:, :shown]
    cells = _cells(part, digits)
    levels = np.clip((part * 10).astype(np.int64), 0, 9).tolist() if heat else None
    sums = _cells(row_sums[:, None], 6) if row_sums is not None else None
    for i, row in enumerate(cells):
        out.append(f'<tr><th scope="row">{i}</th>')
        if levels is not None:
            out += [f'<td class="heat-{h}">{c}</td>' for c, h in zip(row, levels[i], strict=True)]
        else:
            out += [f"<td>{c}</td>" for c in row]
        if sums is not None:
            out.append(f'<td class="row-sum">{sums[i][0]}</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return mark_safe("".join(out))  # noqa: S308 - numbers and escaped captions only


def line_plot(
    series: list[tuple[str, str, np.ndarray]],
    *,
    title: str,
    x_max: int,
    y_lo: float,
    y_hi: float,
    width: int = 640,
    height: int = 280,
) -> SafeString:
    """An SVG line plot of (label, css class, values over steps 0…) clipped to [y_lo, y_hi]."""
    pad_l, pad_r, pad_t, pad_b = 52, 12, 12, 28
    pw, ph = width - pad_l - pad_r, height - pad_t - pad_b
    span = (y_hi - y_lo) or 1.0

    def y_of(v: np.ndarray) -> np.ndarray:
        return pad_t + ph * (1 - (np.clip(v, y_lo, y_hi) - y_lo) / span)

    parts = [
        f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f'<rect class="plot-frame" x="{pad_l}" y="{pad_t}" width="{pw}" height="{ph}"/>',
    ]
    if y_lo < 0 < y_hi:
        y0 = float(y_of(np.array(0.0)))
        parts.append(
            f'<line class="plot-zero" x1="{pad_l}" x2="{pad_l + pw}" y1="{y0:.1f}" y2="{y0:.1f}"/>'
        )
    for value, anchor in ((y_hi, pad_t + 4), (y_lo, pad_t + ph)):
        parts.append(
            f'<text class="plot-label" x="{pad_l - 4}" y="{anchor:.0f}" '
            f'text-anchor="end">{_num(value, 2)}</text>'
        )
    parts.append(
        f'<text class="plot-label" x="{pad_l}" y="{height - 8}">step 0</text>'
        f'<text class="plot-label" x="{pad_l + pw}" y="{height - 8}" text-anchor="end">'
        f"step {x_max}</text>"
    )
    for _label, css, values in series:
        n = len(values)
        idx = np.unique(np.linspace(0, n - 1, min(n, 400)).astype(int))
        xy = np.round(np.stack([pad_l + pw * idx / max(1, x_max), y_of(values[idx])], 1), 1)
        points = " ".join(f"{x},{y}" for x, y in xy.tolist())
        parts.append(f'<polyline class="{css}" fill="none" points="{points}"/>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and an escaped title only


def bar_chart(values: list[float], labels: list[str], *, title: str) -> SafeString:
    width, height, pad = 40 * len(values) + 20, 160, 10
    bar_w = 28
    parts = [
        f'<svg class="bars" viewBox="0 0 {width} {height + 20}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (v, label) in enumerate(zip(values, labels, strict=True)):
        h = max(0.0, v) * (height - pad)
        x = 10 + 40 * i
        parts.append(
            f'<rect class="bar" x="{x}" y="{height - h:.1f}" width="{bar_w}" height="{h:.1f}"/>'
            f'<text class="plot-label" x="{x + bar_w / 2}" y="{height + 14}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and escaped labels only


# --- each widget: numbers (the numpy work, courses/kernels.py) then presentation ------------
# The split lets the benchmark's baseline reuse the numbers while still building the same
# tables and plots, so that "computation removed" removes exactly the computation.


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
            {"i": i, "logit": _num(float(v), 3), "p": _num(float(q), 4), "heat": heat_class(q)}
            for i, (v, q) in enumerate(zip(x.tolist(), p.tolist(), strict=True))
        ],
        "bars": bar_chart(p.tolist(), labels, title=f"softmax probabilities at τ = {tau:g}"),
        "entropy": n["entropy"],
        "max_entropy": math.log(len(x)),
        "argmax": int(np.argmax(x)),
        "top": float(p.max()),
        "temperature": tau,
        "sweep": [
            {"tau": t, "cells": [(_num(q, 3), heat_class(q)) for q in row]}
            for t, row in zip(SOFTMAX_SWEEP, n["sweep"].tolist(), strict=True)
        ],
        "labels": labels,
    }


def _stats(v: np.ndarray) -> dict[str, str]:
    return {
        "mean": _num(float(v.mean()), 4),
        "std": _num(float(v.std()), 4),
        "rms": _num(float(np.sqrt((v * v).mean())), 4),
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
    cols = _cells(np.stack([ln, rms], axis=1), 4)
    return {
        "rows": [
            {"i": i, "x": _num(a, 3), "ln": b, "rms": c}
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
    corrected, _m, _v = kernels.adam(grad, d["theta0"], d["steps"], **args)
    raw, _m2, _v2 = kernels.adam(grad, d["theta0"], d["steps"], bias_correction=False, **args)
    plain = kernels.sgd(grad, d["theta0"], d["steps"], d["lr"])
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
        return _num(float(values[s]), 4) if s < len(values) else "diverged"

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
            "bc": _num(float(corrected[-1]), 4),
            "raw": _num(float(raw[-1]), 4),
            "sgd": "diverged" if sgd_diverged else _num(float(plain[-1]), 4),
        },
        "sgd_diverged_at": len(plain) - 1 if sgd_diverged else None,
        "first_step": {
            "bc": _num(float(first_bc), 6),
            "raw": _num(float(first_raw), 6),
            "ratio": _num(float(first_raw / first_bc), 3) if first_bc else "—",
            "predicted": _num((1 - d["beta1"]) / math.sqrt(1 - d["beta2"]), 3),
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
            pairs.append({"m": m, "n": nn, "offset": off, "right": _num(r, 6), "wrong": _num(w, 6)})
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
        "plain": _num(n["plain"], 6),
        "norm_q": _num(n["norm_q"], 6),
        "norm_spread": f"{n['norm_spread']:.1e}",
        "d_model": heads * d_k,
        "heads": heads,
        "d_k": d_k,
        "freqs": [_num(float(base ** (-2 * i / d_k)), 5) for i in range(min(d_k // 2, 8))],
    }


def compute_attention(d: dict) -> dict:
    return present_attention(d, numbers_attention(d))


# --- the widgets and their views --------------------------------------------------------------


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

_CANNED: dict[tuple[str, str], dict] = {}


def defaults(form_class: type[forms.Form]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, field in form_class.base_fields.items():
        if isinstance(field, forms.BooleanField):
            if field.initial:
                data[name] = "on"
        elif field.initial is not None:
            data[name] = str(field.initial)
    return data


def too_large(query: QueryDict | None, raw: str) -> str | None:
    if len(raw) > MAX_QUERY_STRING or raw.count("&") >= MAX_QUERY_FIELDS:
        return (
            f"The request is too large: at most {MAX_QUERY_STRING:,} characters and "
            f"{MAX_QUERY_FIELDS} fields. Use the seed instead of typing big matrices."
        )
    return None


def form_errors(form: forms.Form) -> list[tuple[str, str]]:
    out = []
    for name, messages in form.errors.items():
        label = str(form.fields[name].label) if name in form.fields else "input"
        out += [(label, str(m)) for m in messages]
    return out


def run_widget(widget: Widget, request: HttpRequest | None, uid: str) -> tuple[dict, int]:
    """Validate the query (defaults for missing fields), compute, and build the context."""
    raw = request.META.get("QUERY_STRING", "") if request is not None else ""
    context: dict[str, Any] = {
        "w": {"key": widget.key, "id": uid, "url": widget.url, "title": widget.title},
        "errors": [],
        "result": None,
    }
    problem = too_large(None, raw)
    data = defaults(widget.form)
    if problem is None and request is not None:
        query = request.GET
        if any(name in query for name in widget.form.base_fields):
            for name, field in widget.form.base_fields.items():
                if isinstance(field, forms.BooleanField):
                    data.pop(name, None)
                if name in query:
                    data[name] = query.get(name)
    form = widget.form(data=data, auto_id=f"{uid}-%s")
    context["form"] = form
    if problem is not None:
        context["form"] = widget.form(data=defaults(widget.form), auto_id=f"{uid}-%s")
        context["errors"] = [("request", problem)]
        return context, 400
    if not form.is_valid():
        context["errors"] = form_errors(form)
        return context, 400
    canned = (
        request is not None
        and os.environ.get("BENCH_NO_COMPUTE") == "1"
        and request.GET.get("_bench") == "canned"
    )
    try:
        if canned:
            cache_key = (widget.key, raw)
            if cache_key not in _CANNED:
                _CANNED[cache_key] = widget.numbers(form.cleaned_data)
            context["result"] = widget.present(form.cleaned_data, _CANNED[cache_key])
        else:
            context["result"] = widget.compute(form.cleaned_data)
    except ValueError as exc:  # the kernels refuse input they cannot compute honestly
        context["errors"] = [("input", str(exc))]
        return context, 400
    return context, 200


def cacheable(request: HtmxHttpRequest, response: HttpResponse, max_age: int) -> HttpResponse:
    patch_vary_headers(response, ["HX-Request"])
    if request.htmx:
        patch_cache_control(response, public=True, max_age=max_age)
    else:
        patch_cache_control(response, private=True, max_age=PAGE_MAX_AGE)
    return response


def _widget_page(request: HtmxHttpRequest, key: str) -> HttpResponse:
    widget = WIDGETS[key]
    context, status = run_widget(widget, request, f"w-{key}")
    context["widget"] = widget
    template = widget.template + ("#result" if request.htmx else "")
    return cacheable(request, render(request, template, context, status=status), FRAGMENT_MAX_AGE)


@require_GET
def attention(request: HtmxHttpRequest) -> HttpResponse:
    return _widget_page(request, "attention")


@require_GET
def softmax(request: HtmxHttpRequest) -> HttpResponse:
    return _widget_page(request, "softmax")


@require_GET
def norms(request: HtmxHttpRequest) -> HttpResponse:
    return _widget_page(request, "norms")


@require_GET
def adam(request: HtmxHttpRequest) -> HttpResponse:
    return _widget_page(request, "adam")


@require_GET
def rope(request: HtmxHttpRequest) -> HttpResponse:
    return _widget_page(request, "rope")


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "courses/widgets/index.html", {"widgets": list(WIDGETS.values())})

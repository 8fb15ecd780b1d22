"""Tables and SVG figures for the widget results, built in Python.

A result can hold thousands of cells, so the markup is joined here rather than looped over in a
template. Nothing carries an inline style (CSP): heat levels are ten CSS classes, plot lines and
bars take their look from courses/static/courses/widgets.css.
"""

from __future__ import annotations

import math

import numpy as np
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


def num(x: float, digits: int = 3) -> str:
    """A number for display: fixed digits, a true minus sign, no "−0.000", −∞ for masks."""
    if x == -math.inf:
        return "−∞"
    text = f"{x:.{digits}f}"
    return "0." + "0" * digits if text == "-0." + "0" * digits else text.replace("-", "−")


def heat_class(w: float) -> str:
    """One of ten CSS classes .heat-0 … .heat-9 for a weight in [0, 1] (CSP: no inline style)."""
    return f"heat-{min(9, max(0, int(w * 10)))}"


def cells(m: np.ndarray, digits: int) -> list[list[str]]:
    """Every entry of m formatted like :func:`num`, fast: round first so −0.000 cannot appear."""
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
    """A matrix as an HTML table, optionally heat-coloured, with row sums and a column limit."""
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
    body = cells(part, digits)
    levels = np.clip((part * 10).astype(np.int64), 0, 9).tolist() if heat else None
    sums = cells(row_sums[:, None], 6) if row_sums is not None else None
    for i, row in enumerate(body):
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
            f'text-anchor="end">{num(value, 2)}</text>'
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
    """An SVG bar chart of values in [0, 1] (probabilities), one labelled bar each."""
    # At least 8 bars wide, so that two or three bars are not blown up to the full figure width.
    width, height, pad = max(40 * len(values) + 20, 340), 160, 10
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

"""Tables and SVG figures for the widget results, built in Python.

A result can hold thousands of cells, so the markup is joined here rather than looped over in a
template. Nothing carries an inline style (CSP): heat levels are ten CSS classes, plot lines and
bars take their look from courses/static/courses/widgets.css.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
from django.utils.html import conditional_escape, escape
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


MASK_LEGEND = (
    '<p class="mask-legend"><span class="mask-swatch" aria-hidden="true"></span> '
    "masked (hatched): −∞ → 0, a weight of exactly 0</p>"
)


MASKED_CELL = '<td class="masked"><span class="visually-hidden">masked</span></td>'


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
    mask: np.ndarray | None = None,
    max_rows: int | None = None,
) -> SafeString:
    """A matrix as an HTML table, optionally heat-coloured, with row sums and row/column limits.

    ``caption`` may be safe HTML (typeset maths). ``mask`` (booleans, True = masked out) draws
    those cells hatched with no number — a masked weight is not a tiny weight — and adds the
    legend "−∞ → 0" under the table.
    """
    rows, cols = m.shape
    shown = cols if max_cols is None else min(cols, max_cols)
    shown_rows = rows if max_rows is None else min(rows, max_rows)
    cut = [f"{shown_rows} of {rows} rows"] if shown_rows < rows else []
    cut += [f"{shown} of {cols} columns"] if shown < cols else []
    note = f" (first {' and '.join(cut)})" if cut else ""
    m = m[:shown_rows]
    row_sums = row_sums[:shown_rows] if row_sums is not None else None
    mask = mask[:shown_rows] if mask is not None else None
    title = conditional_escape(caption)
    out = [f'<div class="table-scroll"><table class="{css}"><caption>{title}{note}'
           "</caption><thead><tr><th scope=\"col\">" + escape(row_label) + "</th>"]  # fmt: skip
    out += [f'<th scope="col">{j}</th>' for j in range(shown)]
    if row_sums is not None:
        out.append('<th scope="col">row sum</th>')
    out.append("</tr></thead><tbody>")
    part = m[:, :shown]
    body = cells(part, digits)
    levels = np.clip((part * 10).astype(np.int64), 0, 9).tolist() if heat else None
    sums = cells(row_sums[:, None], 6) if row_sums is not None else None
    masked = mask[:, :shown].tolist() if mask is not None and mask.any() else None
    for i, row in enumerate(body):
        out.append(f'<tr><th scope="row">{i}</th>')
        if masked is not None:
            heat = levels[i] if levels is not None else [None] * len(row)
            out += [
                MASKED_CELL
                if gone
                else (f'<td class="heat-{h}">{c}</td>' if h is not None else f"<td>{c}</td>")
                for c, h, gone in zip(row, heat, masked[i], strict=True)
            ]
        elif levels is not None:
            out += [f'<td class="heat-{h}">{c}</td>' for c, h in zip(row, levels[i], strict=True)]
        else:
            out += [f"<td>{c}</td>" for c in row]
        if sums is not None:
            out.append(f'<td class="row-sum">{sums[i][0]}</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    if masked is not None:
        out.append(MASK_LEGEND)
    return mark_safe("".join(out))  # noqa: S308 - numbers and escaped captions only


def heat_map(m: np.ndarray, *, title: str, mask: np.ndarray | None = None) -> SafeString:
    """Every entry of a matrix of values in [0, 1] as a coloured square, no numbers: an SVG.

    For the matrices too big to read as a table (64 × 64 attention weights). Each row's runs of
    one heat level are one rectangle, and all rectangles of a level share one ``<path>`` whose
    colour is the table's ``--heat-N`` (light and dark). Masked cells (``mask`` True) are drawn
    hatched, as in the tables. The SVG scales to its box (viewBox, crisp edges).
    """
    rows, cols = m.shape
    levels = np.clip((np.nan_to_num(m) * 10).astype(np.int64), 0, 9)
    if mask is not None:
        levels = np.where(mask, -1, levels)
    paths: dict[int, list[str]] = {}
    for i, row in enumerate(levels.tolist()):
        j = 0
        while j < cols:
            level, start = row[j], j
            while j < cols and row[j] == level:
                j += 1
            paths.setdefault(level, []).append(f"M{start} {i}h{j - start}v1h{start - j}z")
    parts = [
        f'<svg class="heat-map" viewBox="0 0 {cols} {rows}" preserveAspectRatio="none" '
        f'role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
    ]
    if -1 in paths:
        # Masked cells are filled with a hatch pattern, one diagonal per cell. Its id is unique to
        # this picture (a digest of it), as a page may show several.
        pattern = "hmh-" + hashlib.blake2s(levels.tobytes(), digest_size=5).hexdigest()
        parts.append(
            f'<defs><pattern id="{pattern}" width="1" height="1" patternUnits="userSpaceOnUse">'
            '<rect class="hm-masked" width="1" height="1"/><path class="hm-hatch" d="M0 1L1 0"/>'
            "</pattern></defs>"
        )
    for level in sorted(paths):
        fill = f' fill="url(#{pattern})"' if level < 0 else f' class="hm-{level}"'
        parts.append(f'<path{fill} d="{"".join(paths[level])}"/>')
    parts.append("</svg>")
    if -1 in paths:
        parts.append(MASK_LEGEND)
    return mark_safe("".join(parts))  # noqa: S308 - numbers and an escaped title only


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
    """An SVG line plot of (label, css class, values over steps 0…) clipped to [y_lo, y_hi].

    The SVG (with a viewBox) holds only the frame and the lines, stretched to its box, with
    strokes that keep their width (``vector-effect``). The axis labels are HTML around it,
    sized by CSS (widgets.css ``.plot-box``), so they stay legible on a 360 px screen instead
    of shrinking with the drawing.
    """
    span = (y_hi - y_lo) or 1.0

    def y_of(v: np.ndarray) -> np.ndarray:
        return height * (1 - (np.clip(v, y_lo, y_hi) - y_lo) / span)

    parts = [
        f'<div class="plot-box" role="img" aria-label="{escape(title)}">',
        f'<div class="plot-y" aria-hidden="true"><span>{num(y_hi, 2)}</span>'
        f"<span>{num(y_lo, 2)}</span></div>",
        f'<svg class="plot" viewBox="0 0 {width} {height}" preserveAspectRatio="none" '
        'aria-hidden="true" focusable="false" xmlns="http://www.w3.org/2000/svg">',
        f'<rect class="plot-frame" x="0" y="0" width="{width}" height="{height}" '
        'vector-effect="non-scaling-stroke"/>',
    ]
    if y_lo < 0 < y_hi:
        y0 = float(y_of(np.array(0.0)))
        parts.append(
            f'<line class="plot-zero" x1="0" x2="{width}" y1="{y0:.1f}" y2="{y0:.1f}" '
            'vector-effect="non-scaling-stroke"/>'
        )
    for _label, css, values in series:
        n = len(values)
        idx = np.unique(np.linspace(0, n - 1, min(n, 400)).astype(int))
        xy = np.round(np.stack([width * idx / max(1, x_max), y_of(values[idx])], 1), 1)
        points = " ".join(f"{x},{y}" for x, y in xy.tolist())
        parts.append(
            f'<polyline class="{css}" fill="none" points="{points}" '
            'vector-effect="non-scaling-stroke"/>'
        )
    parts.append("</svg>")
    parts.append(
        f'<div class="plot-x" aria-hidden="true"><span>step 0</span><span>step {x_max}</span></div>'
    )
    parts.append("</div>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and an escaped title only


def bar_chart(values: list[float], labels: list[str], *, title: str) -> SafeString:
    """An SVG bar chart of values in [0, 1] (probabilities), one labelled bar each.

    Each bar sits in an equal slot of the SVG (viewBox, stretched to its box); the labels are an
    HTML row of equal slots under it, sized by CSS, so they line up and stay legible.
    """
    slot, height = 40, 160
    width = slot * max(1, len(values))
    parts = [
        f'<div class="bars-box" role="img" aria-label="{escape(title)}">'
        f'<svg class="bars" viewBox="0 0 {width} {height}" preserveAspectRatio="none" '
        'aria-hidden="true" focusable="false" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, v in enumerate(values):
        h = max(0.0, min(1.0, v)) * (height - 4)
        parts.append(
            f'<rect class="bar" x="{slot * i + 6}" y="{height - h:.1f}" width="{slot - 12}" '
            f'height="{h:.1f}"/>'
        )
    parts.append('</svg><ol class="bar-labels" aria-hidden="true">')
    parts += [f"<li>{escape(label)}</li>" for label in labels]
    parts.append("</ol></div>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers and escaped labels only

"""Explorable equations: mark, in rendered MathML, every place a labelled part or a glossary
symbol occurs, so the chapter page can light them all up when the learner points at one.

The renderer (``platform.rendering``) writes sanitised MathML with no ``class`` on any element
(a formula may not restyle the page). After it, this module reads that MathML back as a tree,
finds each occurrence of a *pattern* (the part's or the symbol's own LaTeX, rendered the same
way) and adds our own classes: ``pt-<part id>`` for a part, ``sy-<symbol slug>`` for a symbol,
both with ``eq-mark``. A pattern of one node marks that node; a run of several siblings
(``\\operatorname{Attention}(Q, K, V)``) is wrapped in a new ``<mrow>`` that carries the class.

Matching compares structure, not markup: spacing and annotations are ignored, a one-child
``<mrow>`` is the child itself, and text is compared after NFKC (bold 𝐱 is x). A bare letter
does not match the base of a subscript (``d`` is not the d of ``d_k``); ``\\beta_1`` matches
inside ``\\beta_1^{t}``; a pattern with an empty base (``^\\top``) matches the script of any
superscript. Commands with arguments (``\\sqrt``, ``\\frac``, ``\\hat``) match by element.

Results are cached by a hash of the HTML and the patterns (the chapter article is cached too).
Anything that cannot be read as a tree is returned unchanged: marking never breaks a page.
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from django.core.cache import cache
from django.utils.safestring import SafeString, mark_safe

from platform.rendering import render_math

CACHE_SECONDS = 60 * 60 * 24
VERSION = "2"

_MATH = re.compile(r"<math\b[^>]*>.*?</math>", re.S)
_IGNORED_TAGS = {"mspace", "annotation", "annotation-xml"}
_SCRIPTED = {"msub", "msubsup"}
_INVISIBLE = {"\u2061", "\u2062", "\u2063", "\u2064"}
# Commands whose glossary token has no argument: they are found by the element they make.
_BY_ELEMENT = {
    r"\sqrt": ("msqrt", ""),
    r"\frac": ("mfrac", ""),
    r"\dfrac": ("mfrac", ""),
    r"\tfrac": ("mfrac", ""),
    r"\hat": ("mover", "^"),
    r"\widehat": ("mover", "^"),
    r"\bar": ("mover", "¯"),
    r"\tilde": ("mover", "~"),
}

Sig = tuple  # (tag, text, (child sigs …))


@dataclass(frozen=True)
class Pattern:
    """What to find: a run of node signatures, or every element of a kind (``\\sqrt``)."""

    css: str  # the class the occurrences get
    run: tuple[Sig, ...] = ()
    script_only: bool = False  # ^\top: match the script of any superscript
    element: tuple[str, str] = ("", "")  # (tag, accent text) for _BY_ELEMENT


# --- reading MathML ---------------------------------------------------------------------------


def _parse(fragment: str) -> ET.Element | None:
    """The renderer's sanitised MathML as a tree; no declarations, so no entity expansion."""
    if "<!" in fragment or "<?" in fragment:
        return None
    try:
        return ET.fromstring(fragment.replace("&nbsp;", "&#160;"))  # noqa: S314 - see above
    except ET.ParseError:
        return None


def _content(element: ET.Element) -> list[ET.Element]:
    """The children that carry meaning: no spacing, no annotations, no invisible operators
    (function application, invisible times); semantics unwrapped."""
    out = []
    for child in element:
        if child.tag in _IGNORED_TAGS:
            continue
        if child.tag == "mo" and (child.text or "").strip() in _INVISIBLE:
            continue
        if child.tag == "semantics":
            out += _content(child)[:1]
        else:
            out.append(child)
    return out


def _text(element: ET.Element) -> str:
    return unicodedata.normalize("NFKC", (element.text or "").strip())


def _sig(element: ET.Element) -> Sig:
    children = _content(element)
    if element.tag in ("mrow", "math", "mstyle") and len(children) == 1:
        return _sig(children[0])
    return (element.tag, _text(element), tuple(_sig(c) for c in children))


def _root_run(fragment: str) -> tuple[Sig, ...]:
    """The signatures of a rendered formula's top-level nodes (an empty tuple if none)."""
    match = _MATH.search(fragment)
    root = _parse(match[0]) if match else None
    if root is None:
        return ()
    nodes = _content(root)
    while len(nodes) == 1 and nodes[0].tag == "mrow":
        nodes = _content(nodes[0])
    return tuple(_sig(n) for n in nodes)


@lru_cache(maxsize=2048)
def pattern(css: str, latex: str) -> Pattern | None:
    """The pattern for ``latex`` marked with ``css``; None if it renders to nothing usable."""
    latex = latex.strip()
    if latex in _BY_ELEMENT:
        return Pattern(css, element=_BY_ELEMENT[latex])
    run = _root_run(str(render_math(latex)))
    if not run:
        return None
    if len(run) == 1 and run[0][0] in ("msup", "msubsup") and run[0][2][0] == ("mi", "", ()):
        return Pattern(css, run=(run[0][2][-1],), script_only=True)
    return Pattern(css, run=run)


# --- marking ----------------------------------------------------------------------------------


def _add_class(element: ET.Element, css: str) -> None:
    classes = element.get("class", "").split()
    for name in ("eq-mark", css):
        if name not in classes:
            classes.append(name)
    element.set("class", " ".join(classes))


def _find(root: ET.Element, patterns: Sequence[Pattern]) -> None:
    """Mark every occurrence of every pattern under ``root`` (in place)."""
    parents = {child: parent for parent in root.iter() for child in parent}
    wraps: list[tuple[ET.Element, int, int, str]] = []  # (parent, start, end, css)
    for element in list(root.iter()):
        if element.tag in _IGNORED_TAGS:
            continue
        children = _content(element)
        sigs = [_sig(c) for c in children]
        own = _sig(element)
        parent = parents.get(element)
        is_base = (
            parent is not None and parent.tag in _SCRIPTED and _content(parent)[:1] == [element]
        )
        for p in patterns:
            if p.element[0]:
                accent = _content(element)[-1:] if p.element[1] else []
                if element.tag == p.element[0] and (
                    not p.element[1] or (accent and _text(accent[0]) == p.element[1])
                ):
                    _add_class(element, p.css)
                continue
            if p.script_only:
                if element.tag in ("msup", "msubsup") and sigs[-1:] == list(p.run):
                    _add_class(children[-1], p.css)
                continue
            if len(p.run) == 1:
                (target,) = p.run
                wrapper = element.tag in ("math", "mrow", "mstyle") and len(children) == 1
                if own == target and not wrapper:  # a one-child wrapper: mark the child only
                    if not (is_base and not target[2]):  # d is not the d of d_k
                        _add_class(element, p.css)
                elif (
                    element.tag == "msubsup"
                    and target[0] == "msub"
                    and (tuple(sigs[:2]) == target[2])
                ):
                    for child in children[:2]:  # \beta_1 inside \beta_1^{t}
                        _add_class(child, p.css)
                continue
            n = len(p.run)
            i = 0
            while i + n <= len(sigs):
                if tuple(sigs[i : i + n]) == p.run:
                    wraps.append((element, i, i + n, p.css))
                    i += n
                else:
                    i += 1
    _wrap(wraps)


def _wrap(wraps: list[tuple[ET.Element, int, int, str]]) -> None:
    """Wrap runs of siblings in a classed ``<mrow>``; the same run twice gets both classes."""
    merged: dict[tuple[int, int, int], tuple[ET.Element, list[str]]] = {}
    for parent, start, end, css in wraps:
        key = (id(parent), start, end)
        merged.setdefault(key, (parent, []))[1].append(css)
    # Right to left within a parent, so earlier indexes stay valid; overlapping runs are skipped.
    taken: dict[int, list[tuple[int, int]]] = {}
    for (pid, start, end), (parent, classes) in sorted(
        merged.items(), key=lambda item: (item[0][0], -item[0][1])
    ):
        if any(s < end and start < e for s, e in taken.get(pid, [])):
            continue
        taken.setdefault(pid, []).append((start, end))
        meaningful = _content(parent)
        first, last = meaningful[start], meaningful[end - 1]
        all_children = list(parent)
        a, b = all_children.index(first), all_children.index(last)
        row = ET.Element("mrow", {"class": "eq-run"})
        for name in classes:
            _add_class(row, name)
        for child in all_children[a : b + 1]:
            parent.remove(child)
            row.append(child)
        parent.insert(a, row)


def _escape(text: str | None) -> str:
    return html.escape(text or "", quote=False)


def _write(element: ET.Element) -> str:
    attributes = "".join(f' {k}="{html.escape(v)}"' for k, v in element.attrib.items())
    inner = "".join(_write(child) + _escape(child.tail) for child in element)
    return f"<{element.tag}{attributes}>{_escape(element.text)}{inner}</{element.tag}>"


def _mark_one(fragment: str, patterns: Sequence[Pattern]) -> str:
    root = _parse(fragment)
    if root is None:
        return fragment
    _find(root, patterns)
    return _write(root)


def _unmark_one(fragment: str) -> str:
    root = _parse(fragment)
    if root is None:
        return fragment
    for parent in list(root.iter()):
        for index, child in reversed(list(enumerate(parent))):
            if "eq-run" in child.get("class", "").split():
                parent.remove(child)
                for offset, grandchild in enumerate(child):
                    parent.insert(index + offset, grandchild)
    for element in root.iter():
        element.attrib.pop("class", None)
    return _write(root)


def unmark(marked: str) -> str:
    """``marked`` HTML with every mark taken out again: exactly what the renderer wrote."""
    return _MATH.sub(lambda m: _unmark_one(m[0]), marked)


def mark_html(rendered: str, patterns: Iterable[Pattern | None]) -> SafeString:
    """``rendered`` HTML (already sanitised) with every formula in it marked; cached."""
    found = tuple(p for p in patterns if p is not None)
    if not found or "<math" not in rendered:
        return mark_safe(rendered)  # noqa: S308 - the caller's HTML is already safe
    digest = hashlib.sha256(repr((rendered, found)).encode("utf-8", "surrogatepass")).hexdigest()
    key = f"explorable:{VERSION}:{digest}"
    marked = cache.get(key)
    if marked is None:
        marked = _MATH.sub(lambda m: _mark_one(m[0], found), rendered)
        cache.set(key, marked, CACHE_SECONDS)
    return mark_safe(marked)  # noqa: S308 - only our class attributes were added


def part_class(part_id: int) -> str:
    return f"pt-{part_id}"


def symbol_class(slug: str) -> str:
    return "sy-" + re.sub(r"[^A-Za-z0-9_-]", "-", slug)


def symbol_patterns(symbol) -> list[Pattern]:
    """Every way the glossary says ``symbol`` is written, as patterns for its chip."""
    css = symbol_class(symbol.slug)
    sources = [symbol.latex, *(symbol.tokens or [])]
    seen: set[str] = set()
    out = []
    for source in sources:
        source = (source or "").strip()
        if not source or source in seen:
            continue
        seen.add(source)
        # A Unicode transcription (gₜ) never occurs in rendered MathML: LaTeX, ASCII or one glyph.
        latex_like = source in _BY_ELEMENT or any(c in source for c in "\\_^")
        usable = latex_like or source.isascii() or len(source) == 1
        found = pattern(css, source) if usable else None
        if found is not None:
            out.append(found)
    return out


# --- a chapter's equations, ready to explore ----------------------------------------------------


@dataclass
class ExploredPart:
    """One labelled part beside its equation: how it looks, its role and its glossary meaning."""

    css: str
    latex: str
    math: SafeString
    role: str
    reason: str
    meaning_name: str
    meaning: SafeString  # the first paragraph of the glossary's explanation, or ""


def _meaning(latex: str, symbols: Sequence) -> tuple[str, SafeString]:
    """The glossary entry a part is mostly about: its name and the first paragraph of its
    explanation (typeset). The longest recognised token wins (\\hat{m}_t is m-hat, not m)."""
    from courses.widgets.explorer import decode  # the explorer reads the same glossary
    from platform.rendering import render_markdown

    found = decode(latex, symbols).symbols
    if not found:
        return "", mark_safe("")
    entry = max(found, key=lambda e: len(e.key))
    explanation = getattr(entry.symbol, "explanation", "") or entry.explanation
    first = str(render_markdown(explanation)).split("</p>", 1)[0].removeprefix("<p>")
    return entry.name, mark_safe(first)  # noqa: S308 - sanitised by render_markdown


def explore(equations: Sequence, chapter_symbols: Sequence, symbols: Sequence) -> list[Pattern]:
    """Set on each equation ``display`` (marked MathML), ``shape_html``, ``explanation_html``
    and ``explored`` (its parts as :class:`ExploredPart`); mark each ``chapter_symbols`` row's
    ``css``. Returns the symbols' patterns, to mark other formulas on the page with.

    No side effects beyond those attributes and the render caches.
    """
    from platform.rendering import render_markdown

    symbol_pats: list[Pattern] = []
    for row in chapter_symbols:
        row.css = symbol_class(row.symbol.slug)
        symbol_pats += symbol_patterns(row.symbol)
    for equation in equations:
        parts = list(equation.parts.all())
        pats = [pattern(part_class(p.pk), p.latex) for p in parts] + symbol_pats
        equation.display = mark_html(str(render_math(equation.latex, display=True)), pats)
        shape = str(render_markdown(equation.shape_note)) if equation.shape_note else ""
        equation.shape_html = mark_html(_unwrap_paragraph(shape), pats)
        explanation = str(render_markdown(equation.explanation)) if equation.explanation else ""
        equation.explanation_html = mark_html(explanation, pats)
        explored = []
        for part in parts:
            name, meaning = _meaning(part.latex, symbols)
            explored.append(
                ExploredPart(
                    css=part_class(part.pk),
                    latex=part.latex,
                    math=render_math(part.latex),
                    role=part.get_role_display(),
                    reason=part.reason,
                    meaning_name=name,
                    meaning=meaning,
                )
            )
        equation.explored = explored
    return symbol_pats


_ONE_PARAGRAPH = re.compile(r"\A<p>(.*)</p>\s*\Z", re.S)


def _unwrap_paragraph(rendered: str) -> str:
    match = _ONE_PARAGRAPH.match(rendered)
    return match[1] if match and "<p>" not in match[1] else rendered

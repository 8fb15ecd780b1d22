"""An issue body as a mail client needs it: HTML with typeset equations, and real plain text.

Mail clients drop MathML and scripts, so each equation becomes a picture:

* LaTeX → SVG with ziamath in the site's math font (Latin Modern Math), → PNG at twice the size
  with resvg, shown at 1× through ``width``/``height`` (sharp on high-density screens). The
  PNGs travel in the message as inline ``cid:`` parts of a ``multipart/related`` HTML part
  (the README's "Newsletter" section says why not images hosted on the site).
* Every image carries ``alt``: the equation as unambiguous plain text (``θ_(t−1)``,
  ``√(v̂_t) + ε``), the same text the plain-text part uses. A formula ziamath cannot typeset
  falls back to that text in the HTML, and a formula nobody can parse to its source: never an
  exception.
* Each distinct equation is rendered once (keyed by a hash of its LaTeX, kept in the cache
  shared by all workers), and a whole issue's parts once per process (:func:`render_issue_body`).

The text part is written from markdown-it's token stream, not by stripping characters: headings
underlined, emphasis without its asterisks, links as ``text (https://…)``, code indented by four
spaces, equations as readable text. Links and images in both parts are made absolute against
``SITE_URL`` at send time.
"""

from __future__ import annotations

import base64
import hashlib
import html
import logging
import os
import re
import secrets
import textwrap
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import nh3
import resvg_py
import ziamath
from django.conf import settings
from django.core.cache import cache
from latex2mathml.converter import convert_to_element
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin

from platform import mathfont
from platform.rendering import ALLOWED_ATTRIBUTES, ALLOWED_TAGS, MAX_FORMULA_LENGTH

log = logging.getLogger(__name__)

MAIL_RENDERER_VERSION = "2"
# The whole font (the site serves subsets of it; platform/mathfont.py): mail pictures may need any
# glyph, and the typesetter reads it once per process.
FONT_SOURCE = mathfont.SOURCE
# Equations are set at the body's size (17 px) and rasterised at 2× for high-density screens.
FONT_PX = 17
SCALE = 2
# An equation wider or taller than this at 1× is not drawn (a runaway formula would make a
# multi-megabyte PNG); it is shown as text instead.
MAX_IMAGE_PX = 1600
EQUATION_CACHE_SECONDS = 60 * 60 * 24 * 30
PAPER = "#ffffff"  # the letter's background (newsletter/email/issue.css, .letter)


# --- the font --------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def math_font() -> str:
    """Path of the site's math font as OpenType, decompressed once from the shipped WOFF2.

    ziamath reads OpenType/TrueType only. The site ships one file, the WOFF2 the browser
    loads; an OTF copy is written under VAR_DIR (named by the WOFF2's hash, so a new font
    replaces it) instead of committing a second, 4× larger binary that could drift.
    """
    data = FONT_SOURCE.read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:16]
    target = Path(settings.VAR_DIR) / "fonts" / f"latinmodern-math-{digest}.otf"
    if not target.exists():
        from fontTools.ttLib import TTFont

        target.parent.mkdir(parents=True, exist_ok=True)
        font = TTFont(FONT_SOURCE)
        font.flavor = None
        partial = target.with_suffix(f".{os.getpid()}.tmp")  # one per writing process
        font.save(partial)
        partial.replace(target)  # atomic: parallel workers never read half a font
    return str(target)


# --- equations as readable text --------------------------------------------------------------

_CHAR_REF = re.compile(r"&#x([0-9A-Fa-f]+);")
_RAW_COMMAND = re.compile(r"\\([A-Za-z]+)")
# Accents written over a single symbol become combining marks: v̂, x̃, ȳ, x⃗.
_ACCENTS = {
    "^": "\u0302", "ˆ": "\u0302", "~": "\u0303", "˜": "\u0303", "¯": "\u0304", "‾": "\u0305",
    "→": "\u20d7", "˙": "\u0307", "¨": "\u0308", ".": "\u0307",
}  # fmt: skip
_SUPERSCRIPTS = {"⊤": "ᵀ", "T": "ᵀ", "2": "²", "3": "³", "′": "′", "″": "″", "*": "*"}
# Operators written with a space either side at the top level of a formula.
_SPACED = set("=+−-±×·<>≤≥≠≈∝∈∉⊂⊆∪∩→←↦⇒⇔≡∼∣")
_INVISIBLE = dict.fromkeys(map(ord, "\u2061\u2062\u2063\u2064\u200b"))
_TIGHT_ATOMS = re.compile(r"[\w\u0300-\u036f\u20d0-\u20ffᵀ²³′″.∞∂∇]+", re.UNICODE)


def _plain_char(char: str) -> str:
    """Mathematical bold/italic/script letters (𝐖, 𝑥) as ordinary ones; ϵ as ε."""
    if "\U0001d400" <= char <= "\U0001d7ff":
        return unicodedata.normalize("NFKC", char)
    return {"ϵ": "ε", "ϑ": "θ", "ϕ": "φ", "\u00a0": " "}.get(char, char)


def _leaf_text(element) -> str:
    raw = _CHAR_REF.sub(lambda m: chr(int(m[1], 16)), element.text or "")
    return "".join(_plain_char(c) for c in html.unescape(raw)).translate(_INVISIBLE)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _group(text: str) -> str:
    """``text`` as one unit after _ ^ or /: bare if it is one symbol run, else in parentheses."""
    if _TIGHT_ATOMS.fullmatch(text) or _balanced_call(text):
        return text
    return f"({text})"


def _balanced_call(text: str) -> bool:
    """True for ``√(…)`` / ``(…)`` wrapping the whole text (so it needs no more parentheses)."""
    body = text[1:] if text.startswith("√") else text
    if not (body.startswith("(") and body.endswith(")")):
        return False
    depth = 0
    for index, char in enumerate(body):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and index < len(body) - 1:
            return False
    return True


def _text_of(element, *, tight: bool) -> str:
    tag = _local(element.tag)
    children = list(element)
    if tag in ("mi", "mn", "mtext", "ms"):
        return _leaf_text(element)
    if tag == "mo":
        op = _leaf_text(element)
        op = "−" if op == "-" else op
        if not tight and op in _SPACED:
            return f" {op} "
        if not tight and op == ",":
            return ", "
        return op
    if tag == "mspace":
        return " "
    if tag in ("msub", "munder") and len(children) == 2:
        base, sub = (_text_of(c, tight=True) for c in children)
        return f"{base}_{_group(sub)}"
    if tag in ("msup",) and len(children) == 2:
        base, sup = (_text_of(c, tight=True) for c in children)
        return base + (_SUPERSCRIPTS.get(sup) or f"^{_group(sup)}")
    if tag in ("msubsup", "munderover") and len(children) == 3:
        base, sub, sup = (_text_of(c, tight=True) for c in children)
        return f"{base}_{_group(sub)}" + (_SUPERSCRIPTS.get(sup) or f"^{_group(sup)}")
    if tag == "mover" and len(children) == 2:
        base = _text_of(children[0], tight=True)
        over = _text_of(children[1], tight=True).strip()
        mark = _ACCENTS.get(over)
        if mark and len(base) == 1:
            return base + mark
        if mark:
            return f"{over}({base})" if over != "¯" else f"mean({base})"
        return f"{base}^{_group(over)}"
    if tag == "mfrac" and len(children) == 2:
        num, den = (_text_of(c, tight=False).strip() for c in children)
        return f"{_group(num)}/{_group(den)}"
    if tag == "msqrt":
        return f"√({_join(children, tight=False).strip()})"
    if tag == "mroot" and len(children) == 2:
        base, index = (_text_of(c, tight=False).strip() for c in children)
        return f"root{_group(index)}({base})"
    if tag == "mtable":
        rows = [
            ", ".join(_join(list(cell), tight=False).strip() for cell in row) for row in children
        ]
        return "[" + "; ".join(rows) + "]"
    if tag == "mphantom":
        return ""
    return _join(children, tight=tight)


_BIG_OPERATORS = set("∑∏∐∫∬∭∮⋃⋂⨁⨂")


def _join(children, *, tight: bool) -> str:
    """Siblings in a row; a leading sign stays unary (``−x``), a word-like operator is kept
    apart from what follows (``foo x``, ``∑_(i=1)^n x_i``)."""
    out = ""
    for index, child in enumerate(children):
        piece = _text_of(child, tight=tight or (index == 0 and _local(child.tag) == "mo"))
        if out and piece[:1].isalnum():
            last = children[index - 1]
            leaf = _leaf_text(last) if _local(last.tag) in ("mi", "mo") else ""
            scripted = _local(last.tag) in (
                "msubsup",
                "munderover",
                "msub",
                "munder",
                "msup",
                "mfrac",
            )
            if (len(leaf) > 1 and leaf.isalpha()) or leaf in _BIG_OPERATORS or scripted:
                out += " "
        out += piece
    return out


def _operator_names(latex: str) -> str:
    """Commands latex2mathml does not know (``\\softmax``) written as operator names, so that
    both the text and the picture show ``softmax`` instead of a stray backslash."""
    try:
        probe = convert_to_element(latex)
    except Exception:
        return latex
    leftovers = {
        name
        for element in probe.iter()
        for name in _RAW_COMMAND.findall(element.text or "")
        if _local(element.tag) != "mtext"
    }
    for name in sorted(leftovers):
        latex = re.sub(rf"\\{name}(?![A-Za-z])", rf"\\operatorname{{{name}}}", latex)
    return latex


@lru_cache(maxsize=4096)
def equation_text(latex: str) -> str:
    """A formula as plain text a reader can parse unambiguously: ``θ_(t−1)``, ``√(v̂_t) + ε``,
    ``(QKᵀ)/√(d_k)``. Unparseable input comes back as its source, whitespace collapsed."""
    latex = latex.strip()
    try:
        text = _text_of(convert_to_element(_operator_names(latex)), tight=False)
    except Exception:  # latex2mathml raises many types on malformed input
        text = latex
    text = re.sub(r"\s+", " ", text).strip()
    return text.replace("( ", "(").replace(" )", ")")


# --- equations as pictures -------------------------------------------------------------------


@dataclass(frozen=True)
class Equation:
    """One rendered formula: a PNG at 2×, its 1× box and its readable text."""

    latex: str
    display: bool
    alt: str
    png: bytes | None  # None: could not be typeset; the HTML shows ``alt`` as text
    width: int = 0
    height: int = 0
    depth: int = 0  # pixels below the baseline (inline images sit on the text's baseline)

    @property
    def cid(self) -> str:
        digest = hashlib.sha256(f"{self.display}:{self.latex}".encode()).hexdigest()[:20]
        return f"eq-{digest}@fromscratch"

    @property
    def data_url(self) -> str:
        """The picture as a data: URL (the admin's preview; mail uses the cid: part)."""
        return "data:image/png;base64," + base64.b64encode(self.png or b"").decode()

    @property
    def filename(self) -> str:
        return self.cid.split("@", 1)[0] + ".png"


def _typeset(latex: str, display: bool) -> tuple[bytes, int, int, int] | None:
    """(PNG at 2×, width, height, depth at 1×), or None when ziamath cannot set it."""
    if len(latex) > MAX_FORMULA_LENGTH:
        return None
    try:
        math = ziamath.Latex(
            _operator_names(latex), font=math_font(), size=FONT_PX, inline=not display
        )
        svg = math.svg()
    except Exception:  # ziamath's parser raises many types on input it cannot set
        log.info("mail: could not typeset %r; sending its text", latex[:200])
        return None
    match = re.search(r'viewBox="([-\d.e]+) ([-\d.e]+) ([-\d.e]+) ([-\d.e]+)"', svg)
    if not match:
        return None
    _x, top, width, height = (float(v) for v in match.groups())
    if width <= 0 or height <= 0 or width > MAX_IMAGE_PX or height > MAX_IMAGE_PX:
        return None
    # On the letter's white, not transparent: a client that darkens the mail (Gmail's apps)
    # leaves pictures alone, and black glyphs on a transparent ground would vanish.
    png = bytes(
        resvg_py.svg_to_bytes(svg_string=svg, zoom=SCALE, skip_system_fonts=True, background=PAPER)
    )
    depth = max(0, round(height + top))  # the baseline is at y = 0 of the viewBox
    return png, round(width), round(height), depth


def render_equation(latex: str, *, display: bool) -> Equation:
    """The equation, from the shared cache when any worker has drawn it before."""
    latex = latex.strip()
    alt = equation_text(latex)
    key = (
        f"mail-eq:{MAIL_RENDERER_VERSION}:{int(display)}:"
        + hashlib.sha256(latex.encode("utf-8", "surrogatepass")).hexdigest()
    )
    drawn = cache.get(key)
    if drawn is None:
        drawn = _typeset(latex, display) or ()
        cache.set(key, drawn, EQUATION_CACHE_SECONDS)
    if not drawn:
        return Equation(latex=latex, display=display, alt=alt, png=None)
    png, width, height, depth = drawn
    return Equation(
        latex=latex, display=display, alt=alt, png=png, width=width, height=height, depth=depth
    )


def equation_html(equation: Equation) -> str:
    """The <img> for an equation (``cid:`` source), or its text when it has no picture."""
    alt = html.escape(equation.alt)
    if equation.png is None:
        code = f'<code class="math-fallback">{alt or html.escape(equation.latex)}</code>'
        return f'<p class="math-display">{code}</p>' if equation.display else code
    if equation.display:
        return (
            f'<p class="math-display"><img class="math-display-img" src="cid:{equation.cid}" '
            f'width="{equation.width}" height="{equation.height}" alt="{alt}"></p>'
        )
    return (
        f'<img class="math-inline" src="cid:{equation.cid}" width="{equation.width}" '
        f'height="{equation.height}" alt="{alt}" style="vertical-align:-{equation.depth}px">'
    )


# --- markdown → HTML for mail ----------------------------------------------------------------

# "FSMAILEQ<nonce>N<index>Q" survives markdown and the sanitiser as a plain word; the nonce is
# new for each render, so text in a body can never be mistaken for a marker.
_EQ_MARK = "FSMAILEQ{}N{}Q"

MAIL_TAGS = set(ALLOWED_TAGS) | {"img"}
MAIL_ATTRIBUTES = {**ALLOWED_ATTRIBUTES, "img": {"src", "alt", "title", "width", "height"}}


def absolute_url(url: str) -> str:
    """A link or image address as an absolute URL on the running site (SITE_URL); absolute
    http(s) and mailto links and in-message anchors (``#fn1``) are kept."""
    url = url.strip()
    if not url or url.startswith("#") or urlsplit(url).scheme in ("http", "https", "mailto"):
        return url
    return urljoin(settings.SITE_URL + "/", url)


def _absolute_links(tag: str, attribute: str, value: str) -> str | None:
    if attribute in ("href", "src"):
        return absolute_url(value)
    return value


def _math_inline_mark(self, tokens, idx, options, env) -> str:
    return _EQ_MARK.format(env["nonce"], env["equations"][(tokens[idx].content.strip(), False)])


def _math_block_mark(self, tokens, idx, options, env) -> str:
    index = env["equations"][(tokens[idx].content.strip(), True)]
    return "<p>" + _EQ_MARK.format(env["nonce"], index) + "</p>\n"


@lru_cache(maxsize=1)
def _mail_markdown() -> MarkdownIt:
    """The site's Markdown dialect (CommonMark, tables, strikethrough, footnotes, dollar
    maths); maths renders to a marker that :func:`render_body` swaps for its picture."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.enable("table").enable("strikethrough")
    md.use(dollarmath_plugin, allow_space=True, allow_digits=False)
    md.use(footnote_plugin)
    md.add_render_rule("math_inline", _math_inline_mark)
    md.add_render_rule("math_block", _math_block_mark)
    md.add_render_rule("math_block_label", _math_block_mark)
    return md


@dataclass(frozen=True)
class RenderedBody:
    html: str  # sanitised, links absolute, equations as <img src="cid:…">
    text: str  # plain text
    equations: tuple[Equation, ...]  # distinct, in order of first use


def _collect_equations(tokens: list[Token], found: dict[tuple[str, bool], int]) -> None:
    for token in tokens:
        if token.type in ("math_inline", "math_block", "math_block_label"):
            found.setdefault((token.content.strip(), token.type != "math_inline"), len(found))
        if token.children:
            _collect_equations(token.children, found)


def render_body(source: str) -> RenderedBody:
    """An issue body (Markdown with ``$…$`` and ``$$…$$``) as mail HTML and plain text."""
    md = _mail_markdown()
    tokens = md.parse(source or "")
    found: dict[tuple[str, bool], int] = {}
    _collect_equations(tokens, found)
    equations = [render_equation(latex, display=display) for (latex, display) in found]
    nonce = secrets.token_hex(8)
    raw = md.renderer.render(tokens, md.options, {"equations": found, "nonce": nonce})
    body = nh3.clean(
        raw,
        tags=MAIL_TAGS,
        attributes=MAIL_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener",
        strip_comments=True,
        attribute_filter=_absolute_links,
    )
    mark = rf"FSMAILEQ{nonce}N(\d+)Q"
    # A display equation alone in its paragraph brings its own <p>; the rest sit in the text.
    body = re.sub(rf"<p>{mark}</p>", lambda m: equation_html(equations[int(m[1])]), body)
    body = re.sub(mark, lambda m: equation_html(equations[int(m[1])]), body)
    pictured = tuple({eq.cid: eq for eq in equations if eq.png is not None}.values())
    return RenderedBody(html=body, text=markdown_to_mail_text(tokens), equations=pictured)


# --- markdown → plain text -------------------------------------------------------------------

WIDTH = 72


def _inline_text(children: list[Token] | None) -> str:
    out: list[str] = []
    links: list[str] = []
    for token in children or []:
        kind = token.type
        if kind == "text" or kind == "code_inline":
            out.append(token.content)
        elif kind in ("softbreak",):
            out.append(" ")
        elif kind == "hardbreak":
            out.append("\n")
        elif kind == "math_inline":
            out.append(equation_text(token.content))
        elif kind == "link_open":
            links.append(absolute_url(str(token.attrGet("href") or "")))
            out.append("\x00")  # where the link text starts, to compare it with the URL
        elif kind == "link_close":
            url = links.pop()
            start = len(out) - 1 - out[::-1].index("\x00")
            label = "".join(out[start + 1 :])
            del out[start:]
            if not url or url.startswith("#"):
                out.append(label)
            elif label.strip() in (url, url.removeprefix("mailto:")):
                out.append(url)
            else:
                out.append(f"{label} ({url})")
        elif kind == "image":
            src = absolute_url(str(token.attrGet("src") or ""))
            label = token.content or "image"
            out.append(f"[{label}: {src}]")
        elif kind == "footnote_ref":
            out.append(f"[{token.meta['id'] + 1}]")
        # em/strong/s open and close: the emphasis has no plain-text form; drop the markers.
    return "".join(out)


def _wrap(text: str, first: str = "", rest: str = "") -> str:
    lines: list[str] = []
    for paragraph_line in text.split("\n"):
        lines.extend(
            textwrap.wrap(
                paragraph_line,
                width=WIDTH,
                initial_indent=first if not lines else rest,
                subsequent_indent=rest,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [first if not lines else rest]
        )
    return "\n".join(line.rstrip() for line in lines)


def markdown_to_mail_text(tokens: list[Token]) -> str:
    """Readable plain text from markdown-it tokens (see the module docstring)."""
    blocks: list[tuple[str, bool]] = []  # (text, inside a list)
    prefixes: list[str] = []  # "> " for quotes, list markers for items
    lists: list[list[int | None]] = []  # per open list: [next number or None for bullets]
    item_first = False
    heading_level = 0
    table_rows: list[list[str]] = []
    row: list[str] | None = None
    footnotes: list[str] = []
    in_footnote = False

    def indent() -> tuple[str, str]:
        quote = "".join(p for p in prefixes if p == "> ")
        depth = len(lists)
        if not depth:
            return quote, quote
        pad = "  " * (depth - 1)
        if item_first:
            numbering = lists[-1][0]
            marker = "- " if numbering is None else f"{numbering}. "
            return quote + pad + marker, quote + pad + " " * len(marker)
        pad_rest = pad + "  "
        return quote + pad_rest, quote + pad_rest

    def add(block: str) -> None:
        if in_footnote:
            footnotes[-1] += (" " if footnotes[-1] else "") + block.strip()
        else:
            blocks.append((block, bool(lists)))

    for token in tokens:
        kind = token.type
        if kind == "heading_open":
            heading_level = int(token.tag[1])
        elif kind == "heading_close":
            heading_level = 0
        elif kind == "inline":
            content = _inline_text(token.children)
            if row is not None:
                row.append(content.strip())
            elif heading_level:
                title = content.strip()
                rule = ("=" if heading_level == 1 else "-") * min(len(title), WIDTH)
                add(f"{title}\n{rule}" if heading_level <= 2 else title.upper())
            else:
                first, rest = indent()
                add(_wrap(content, first, rest))
                item_first = False
        elif kind == "bullet_list_open":
            lists.append([None])
        elif kind == "ordered_list_open":
            start = token.attrGet("start")
            lists.append([int(start) if start else 1])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            item_first = True
        elif kind == "list_item_close":
            if lists and lists[-1][0] is not None:
                lists[-1][0] = int(lists[-1][0]) + 1
            item_first = False
        elif kind == "blockquote_open":
            prefixes.append("> ")
        elif kind == "blockquote_close":
            prefixes.pop()
        elif kind in ("fence", "code_block"):
            first, _rest = indent()
            code = token.content.rstrip("\n")
            add("\n".join(first + "    " + line if line else "" for line in code.split("\n")))
            item_first = False
        elif kind in ("math_block", "math_block_label"):
            first, _rest = indent()
            add(first + "    " + equation_text(token.content))
            item_first = False
        elif kind == "hr":
            add("* * *")
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close":
            if row is not None:
                table_rows.append(row)
            row = None
        elif kind == "table_close":
            add("\n".join(" | ".join(cells) for cells in table_rows))
            table_rows = []
        elif kind == "footnote_open":
            footnotes.append("")
            in_footnote = True
        elif kind == "footnote_close":
            in_footnote = False
    if footnotes:
        notes = "\n".join(f"[{n}] {text}" for n, text in enumerate(footnotes, start=1))
        blocks.append((notes, False))
    # Items of one list sit on consecutive lines; other blocks are separated by a blank line.
    return _join_blocks(blocks)


def _join_blocks(blocks: list[tuple[str, bool]]) -> str:
    out = ""
    previous_in_list = False
    for block, in_list in blocks:
        if out:
            out += "\n" if (in_list and previous_in_list) else "\n\n"
        out += block
        previous_in_list = in_list
    return out.strip("\n") + "\n"

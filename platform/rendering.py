"""Markdown, maths and code to safe HTML — the one renderer every app uses.

* Markdown is parsed by markdown-it-py (CommonMark + tables + footnotes + ``$…$``/``$$…$$``).
* Maths becomes MathML on the server (latex2mathml), so no JavaScript is needed and htmx
  fragments, feeds and no-JS readers all get typeset formulas. Commands latex2mathml leaves raw
  (``\\arg``, ``\\softmax`` …) are retried as ``\\operatorname{…}``. latex2mathml's own
  serialiser un-escapes everything it wrote (``\\text{</math><h2>…}`` would become markup), so
  its element tree is written out here instead: every text node escaped, only the presentation
  attributes it legitimately emits kept — never ``id``, ``class``, ``style`` or ``href``.
* Before writing, the tree is tidied for MathML Core in Chromium (operator names tight before a
  bracket and a thin space before a symbol, ``\\big)^2`` on the axis, upright capital Greek,
  one-glyph ``\\hat``, a placeholder in an empty ``\\sqrt{}``, a lone ``^\\top`` at text size),
  and every formula carries its LaTeX: ``alttext`` on <math> and an ``application/x-tex``
  annotation in <semantics>, for screen readers, copy and feed readers.
* Editors' LaTeX is checked by :func:`latex_problem` / :func:`markdown_math_problem` (models'
  ``clean()`` and the content loaders) and :func:`part_occurs` (a labelled part must be a piece
  of its equation, compared as typeset MathML).
* Fenced code is highlighted by Pygments with CSS classes (``platform/pygments.css``).
* The resulting HTML is sanitised by nh3 with an allow-list that includes the MathML elements,
  so editor-written markdown cannot inject script, event handlers or ``javascript:`` links.
* Results are cached by a hash of their source: an edit changes the hash, so saving new text
  is the invalidation. Per-formula results are also kept in a small in-process LRU cache.
"""

from __future__ import annotations

import hashlib
import html
import re
import xml.etree.ElementTree as ET
from functools import lru_cache

import nh3
from django.core.cache import cache
from django.utils.safestring import SafeString, mark_safe
from latex2mathml.converter import convert_to_element
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

RENDERER_VERSION = "3"  # bump when the MathML or HTML written changes: caches key on it
CACHE_SECONDS = 60 * 60 * 24 * 7
MAX_FORMULA_LENGTH = 5000

MATHML_TAGS = {
    "math", "mrow", "mi", "mn", "mo", "ms", "mspace", "mtext", "msub", "msup", "msubsup",
    "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd",
    "mstyle", "mpadded", "menclose", "merror", "mphantom", "semantics", "annotation",
    "mmultiscripts", "mprescripts", "none",
}  # fmt: skip
MATHML_ATTRIBUTES = {
    "display", "mathvariant", "accent", "accentunder", "stretchy", "fence", "separator",
    "lspace", "rspace", "width", "height", "depth", "linethickness", "displaystyle",
    "scriptlevel", "columnalign", "rowalign", "columnspacing", "rowspacing", "movablelimits",
    "largeop", "symmetric", "minsize", "maxsize", "notation", "form", "encoding",
    "columnlines", "rowlines", "frame", "mathsize", "voffset", "alttext",
}  # fmt: skip
# No MathML element may carry id (DOM clobbering: id="fromScratchWidgets" replaces a global)
# nor class/style/href (\\class, \\style, \\href): a formula must not restyle the page or link.
ALLOWED_TAGS = (set(nh3.ALLOWED_TAGS) - {"img", "map", "area"}) | MATHML_TAGS | {"input"}
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items()},
    **{tag: set(MATHML_ATTRIBUTES) for tag in MATHML_TAGS},
    "a": {"href", "hreflang", "title", "id", "class"},
    "code": {"class"},
    "pre": {"class"},
    "span": {"class"},
    "div": {"class"},
    "li": {"id", "class"},
    "sup": {"class", "id"},
    "section": {"class"},
    "th": {"class", "scope", "colspan", "rowspan"},
    "td": {"class", "colspan", "rowspan"},
    "input": {"type", "checked", "disabled"},
}
ALLOWED_TAGS |= {"section"}
# Markdown tables align columns with style="text-align:…"; the CSP forbids inline styles, so
# alignment becomes a class (see site.css) before sanitising, and every style attribute goes.
_ALIGN_STYLE = re.compile(r'<(th|td) style="text-align:(left|right|center)">')

# latex2mathml prints these as raw text; they are operator names.
_RAW_COMMAND = re.compile(r"\\([A-Za-z]+)")
_FORMATTER = HtmlFormatter(nowrap=True, classprefix="")


def sanitize_html(raw_html: str) -> str:
    """Keep formatting, links, tables, code and MathML; drop script, handlers, bad URLs."""
    return nh3.clean(
        raw_html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


# latex2mathml writes symbols as character references in its text nodes ("&#x0003C;"); they
# survive escaping, and anything else a formula says becomes characters, never markup.
_CHARACTER_REFERENCE = re.compile(r"&amp;(#x[0-9A-Fa-f]{1,6}|#[0-9]{1,7});")


def _escape_text(text: str | None) -> str:
    return _CHARACTER_REFERENCE.sub(r"&\1;", html.escape(text or "", quote=False))


def _serialise(element) -> str:
    """Write latex2mathml's tree as MathML: known tags, allowed attributes, escaped text."""
    tag = element.tag if element.tag in MATHML_TAGS else "mrow"
    attributes = "".join(
        f' {name}="{html.escape(value)}"'
        for name, value in element.attrib.items()
        if name in MATHML_ATTRIBUTES
    )
    children = "".join(_serialise(child) + _escape_text(child.tail) for child in element)
    return f"<{tag}{attributes}>{_escape_text(element.text)}{children}</{tag}>"


# --- typesetting fixes on latex2mathml's tree -------------------------------------------------
#
# MathML Core spaces an <mo> by the operator dictionary and an unknown <mo> ("Attention" from
# \operatorname) gets 0.2777em on both sides, so "Attention (Q)"; an <mi> gets none, so
# "\log q_i" came out as "logqᵢ". Operator names become <mi> followed by U+2061 FUNCTION
# APPLICATION with an explicit rspace: none before a bracket, a thin space (TeX's \, between
# an operator and an ordinary symbol) otherwise. \big brackets: see _sized_bracket.

_FUNCTION_APPLICATION = "\u2061"
_THIN_SPACE = "0.1667em"
_OPENING = set("([{|\u2016\u27e8\u2308\u230a")
_SCRIPTED = {"msub", "msup", "msubsup", "munder", "mover", "munderover"}
_ROW_LIKE = {"math", "mrow", "mstyle", "msqrt", "mtd", "mpadded", "mphantom", "menclose"}
_NAMED_SPACES = {
    "veryverythinmathspace": "0.0556em", "verythinmathspace": "0.1111em",
    "thinmathspace": "0.1667em", "mediummathspace": "0.2222em", "thickmathspace": "0.2778em",
    "verythickmathspace": "0.3333em", "veryverythickmathspace": "0.3889em",
    "negativethinmathspace": "-0.1667em", "negativemediummathspace": "-0.2222em",
    "negativethickmathspace": "-0.2778em",
}  # fmt: skip
_UPRIGHT_GREEK = set("ΓΔΘΛΞΠΣΥΦΨΩ")
PLACEHOLDER = "\u2b1a"  # ⬚ DOTTED SQUARE: where a template has nothing (\sqrt{})


def _text(element: ET.Element) -> str:
    return html.unescape(element.text or "")


def _is_name(element: ET.Element) -> bool:
    r"""An operator name: "log" from \log, "Attention" from \operatorname, "LN" from \mathrm."""
    text = _text(element)
    return element.tag in {"mi", "mo"} and len(text) > 1 and text.isalpha()


def _upright_word(element: ET.Element) -> str | None:
    r"""\mathrm{LN} arrives as an <mrow> of upright letters; it reads as one word."""
    if element.tag != "mrow" or len(element) < 2:
        return None
    letters = []
    for child in element:
        text = _text(child)
        if child.tag != "mi" or child.get("mathvariant") != "normal" or len(text) != 1:
            return None
        if not text.isalpha() or len(child) or (child.tail or "").strip():
            return None
        letters.append(text)
    return "".join(letters)


def _opens(element: ET.Element) -> bool:
    r"""Does this row item start with an opening bracket (\left(, \big[, plain ( …)?"""
    while element.tag in {"mrow", "mpadded", *_SCRIPTED} and len(element):
        element = element[0]
    return element.tag == "mo" and _text(element) in _OPENING


def _sized_bracket(element: ET.Element) -> ET.Element | None:
    r"""``\big)`` and friends as a bracket scaled to their size, centred on the math axis.

    latex2mathml writes them as stretchy <mo> with minsize = maxsize; Chromium then lays out
    the widest of the font's size variants (0.875em for Latin Modern's parenthesis) for a glyph
    a third as wide, so "W ( x )" gained gaps, and as the base of a script the bracket sank
    below the line. A non-stretchy bracket at that mathsize keeps its own width and the
    exponent attaches to it; it grows from the baseline, so it is lowered by the quarter of
    the growth that keeps it centred on the axis (at 0.25em)."""
    size = element.get("minsize", "")
    if element.tag != "mo" or not size.endswith("em") or element.get("maxsize") != size:
        return None
    try:
        scale = float(size[:-2])
    except ValueError:
        return None
    bracket = ET.Element("mo", {"stretchy": "false", "mathsize": size})
    for name in ("fence", "form"):
        if element.get(name):
            bracket.set(name, element.attrib[name])
    bracket.text = element.text
    wrapper = ET.Element("mpadded", {"voffset": f"{-(scale - 1) * 0.25:.3f}em"})
    wrapper.append(bracket)
    wrapper.tail = element.tail
    return wrapper


def _tidy(element: ET.Element) -> None:
    for child in element:
        _tidy(child)
    if element.tag == "mspace" and element.get("width") in _NAMED_SPACES:
        element.set("width", _NAMED_SPACES[element.get("width", "")])
    if element.tag in {"msqrt", "mroot"} and (
        len(element) == 0 or (element[0].tag == "mrow" and len(element[0]) == 0)
    ):
        # An empty radical (the glossary's \sqrt{}) shows a placeholder under the bar.
        for child in list(element)[:1]:
            element.remove(child)
        placeholder = ET.Element("mi", {"mathvariant": "normal"})
        placeholder.text = PLACEHOLDER
        element.insert(0, placeholder)
    if (
        element.tag == "mi"
        and not element.attrib
        and (element.text or "").startswith("&#")
        and _text(element).isascii()
        and _text(element).isalpha()
    ):
        # latex2mathml writes \mathrm{d} as <mi>&#x00064;</mi>, a plain letter that MathML
        # would set in italic; only \mathrm takes that path (a typed d stays "d").
        element.set("mathvariant", "normal")
    if element.tag == "mi" and not element.attrib and _text(element) in _UPRIGHT_GREEK:
        element.set("mathvariant", "normal")  # TeX sets capital Greek upright: Λ, Σ, not 𝛬, 𝛴
    if element.tag == "mover" and len(element) == 2 and element[1].tag == "mo":
        accent, mark = element[1], _text(element[1])
        if (mark == "^" and element.get("accent") == "true") or (
            mark == "~" and accent.get("stretchy") == "false"
        ):
            # \hat and \tilde are one glyph wide in TeX (\widehat stretches): the spacing
            # modifier letters ˆ and ˜ sit as accents where ASCII ^ and ~ would stretch.
            accent.text = "\u02c6" if mark == "^" else "\u02dc"
            accent.set("stretchy", "false")
    if element.tag == "mo" and _text(element) == "\u22a4":
        element.tag = "mi"  # \top is an ordinary symbol in TeX, not an operator
        element.attrib = {"mathvariant": "normal"}
    for index, child in enumerate(list(element)):
        sized = _sized_bracket(child)
        if sized is not None:
            element.remove(child)
            element.insert(index, sized)
    for index, child in enumerate(list(element)):
        word = _upright_word(child)
        if word is not None:
            replacement = ET.Element("mi")
            replacement.text = word
            replacement.tail = child.tail
            element.remove(child)
            element.insert(index, replacement)
    if element.tag in _ROW_LIKE:
        _tidy_row(element)


def _tidy_row(row: ET.Element) -> None:
    children = list(row)
    for index, child in enumerate(children):
        name = child
        if child.tag in _SCRIPTED and len(child):
            name = child[0]
        if not _is_name(name):
            continue
        if name.tag == "mo" and name is child:
            name.tag = "mi"
            name.attrib = {}
        elif name.tag == "mo":  # \max_i: an operator with limits keeps them, loses the gap
            name.set("lspace", "0")
            name.set("rspace", "0")
        following = children[index + 1] if index + 1 < len(children) else None
        if following is None or (following.tag == "mo" and not _opens(following)):
            continue  # at the end, or before "=", "+", ",": the operator spaces itself
        if following.tag == "mspace":
            continue  # the author spaced it (\! or \,)
        apply = ET.Element(
            "mo", {"lspace": "0", "rspace": "0" if _opens(following) else _THIN_SPACE}
        )
        apply.text = _FUNCTION_APPLICATION
        apply.tail = child.tail
        child.tail = None
        row.insert(list(row).index(child) + 1, apply)


def _lone_script(root: ET.Element) -> ET.Element:
    r"""A part that is only a script (``^\top``) shows the script at normal size, not a small
    raised glyph on nothing."""
    row = root[0] if len(root) == 1 and root[0].tag == "mrow" else root
    if len(row) == 1 and row[0].tag in {"msup", "msub"} and len(row[0]) == 2:
        base, script = row[0][0], row[0][1]
        if len(base) == 0 and not (base.text or "").strip():
            row.remove(row[0])
            row.append(script)
    return root


def _with_source(root: ET.Element, latex: str) -> ET.Element:
    r"""The LaTeX rides along: ``alttext`` for screen readers and feed readers, and an
    ``application/x-tex`` annotation inside <semantics> for tools that read MathML."""
    presentation = ET.Element("mrow")
    if len(root) == 1 and root[0].tag == "mrow":
        presentation = root[0]
    else:
        presentation.extend(list(root))
    for child in list(root):
        root.remove(child)
    semantics = ET.SubElement(root, "semantics")
    semantics.append(presentation)
    annotation = ET.SubElement(semantics, "annotation", {"encoding": "application/x-tex"})
    annotation.text = latex
    root.set("alttext", latex)
    return root


def _presentation(latex: str, display: bool) -> ET.Element:
    latex = latex.replace("\\operatorname*{", "\\operatorname{")
    root = convert_to_element(latex, display="block" if display else "inline")
    _tidy(root)
    return _lone_script(root)


def _raw_commands(root: ET.Element) -> set[str]:
    r"""Commands latex2mathml did not know and printed as text (``\softmax``)."""
    return {name for node in root.iter() for name in _RAW_COMMAND.findall(node.text or "")}


def _convert(latex: str, display: bool) -> str:
    root = _presentation(latex, display)
    leftovers = _raw_commands(root)
    if leftovers:
        retried = latex
        for name in leftovers:
            retried = re.sub(rf"\\{name}(?![A-Za-z])", rf"\\operatorname{{{name}}}", retried)
        root = _presentation(retried, display)
    return _serialise(_with_source(root, latex))


@lru_cache(maxsize=4096)
def _math_html(latex: str, display: bool) -> str:
    latex = latex.strip()
    if not latex:
        return ""
    if len(latex) > MAX_FORMULA_LENGTH:
        return f'<code class="math-error">{html.escape(latex[:200])}…</code>'
    try:
        mathml = _convert(latex, display)
    except Exception:  # latex2mathml raises many types on malformed input; show the source
        css = "math-error math-block" if display else "math-error"
        return (
            f'<code class="{css}" title="This formula could not be typeset">'
            f"{html.escape(latex)}</code>"
        )
    # Keep the TeX as an annotation so screen readers and copy-paste still have it.
    return sanitize_html(mathml)


# --- checking what editors write ------------------------------------------------------------

# Names latex2mathml does not know that read as operator names (retried as \operatorname);
# any other unknown command is an editor's typo and is refused on save.
OPERATOR_NAMES = {
    "softmax", "argmax", "argmin", "Var", "Cov", "diag", "tr", "rank", "sign", "sgn",
    "erf", "ReLU", "GELU", "SiLU", "RMS", "LN", "KL", "MSE", "FFN", "Attention", "RMSNorm",
    "LayerNorm", "MultiHead", "Concat", "head", "Swish", "SwiGLU", "GLU", "Softmax", "Adam",
    "logit", "sigmoid", "supp", "dom", "vec", "relu", "gelu", "silu", "swish", "cov", "var",
    "std", "Std", "Tr", "Pr", "E", "arg", "const", "lse", "logsumexp", "RoPE",
}  # fmt: skip


_CONVERTER_ERRORS = {
    "ExtraLeftOrMissingRightError": " — a \\left without its \\right",
    "MissingSuperScriptOrSubscriptError": " — a ^ or _ with nothing after it",
    "DoubleSuperscriptsError": " — two superscripts on one symbol; group them with braces",
    "DoubleSubscriptsError": " — two subscripts on one symbol; group them with braces",
    "NoAvailableTokensError": " — it ends too early: a command lacks its argument or an "
    "environment is not closed",
    "MissingEndError": " — a \\begin without its \\end",
    "InvalidAlignmentError": " — a misplaced &",
    "InvalidStyleForGenfracError": " — a bad \\genfrac style",
    "InvalidWidthError": " — a bad width",
}


def _brace_problem(latex: str) -> str | None:
    depth = 0
    for index, char in enumerate(latex):
        if char in "{}" and index and latex[index - 1] == "\\":
            continue  # \{ and \} are literal braces
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return f"unbalanced braces: a “}}” at character {index + 1} closes nothing"
    if depth:
        return f"unbalanced braces: {depth} “{{” not closed"
    return None


def latex_problem(latex: str) -> str | None:
    """Why ``latex`` cannot be typeset, in words for an editor; None when it can."""
    latex = latex or ""
    if len(latex) > MAX_FORMULA_LENGTH:
        return f"longer than {MAX_FORMULA_LENGTH} characters"
    problem = _brace_problem(latex)
    if problem:
        return problem
    try:
        root = _presentation(latex, False)
    except Exception as error:  # latex2mathml raises many types on malformed input
        name = type(error).__name__
        detail = str(error).strip()
        explained = _CONVERTER_ERRORS.get(name, "")
        said = f"{name}: {detail}" if detail and detail != name else name
        return f"the LaTeX converter refused it ({said}){explained}"
    unknown = sorted(_raw_commands(root) - OPERATOR_NAMES)
    if unknown:
        names = ", ".join(f"\\{name}" for name in unknown)
        return f"unknown command {names}" if len(unknown) == 1 else f"unknown commands {names}"
    return None


def formulas_in_markdown(source: str) -> list[str]:
    """The LaTeX of every ``$…$`` and ``$$…$$`` formula in a Markdown text, in order."""
    found: list[str] = []
    for token in _markdown().parse(source or ""):
        if token.type.startswith("math_block"):
            found.append(token.content)
        for child in token.children or []:
            if child.type.startswith("math_inline"):
                found.append(child.content)
    return found


def markdown_math_problem(source: str) -> str | None:
    """The first formula in a Markdown text that cannot be typeset, and why; or None."""
    for latex in formulas_in_markdown(source):
        problem = latex_problem(latex)
        if problem:
            shown = latex if len(latex) <= 60 else latex[:57] + "…"
            return f"${shown}$: {problem}"
    return None


def check_math_fields(
    instance: object, *, latex: tuple[str, ...] = (), markdown: tuple[str, ...] = ()
) -> dict[str, str]:
    """For a model's ``clean()``: each named field whose maths cannot be typeset, with why.
    ``latex`` fields hold one formula; ``markdown`` fields hold ``$…$`` formulas in text."""
    errors: dict[str, str] = {}
    for name in latex:
        value = getattr(instance, name, "") or ""
        problem = latex_problem(value) if value.strip() else None
        if problem:
            errors[name] = f"This LaTeX cannot be typeset: {problem}."
    for name in markdown:
        problem = markdown_math_problem(getattr(instance, name, "") or "")
        if problem:
            errors[name] = f"A formula here cannot be typeset: {problem}."
    return errors


_LAYOUT_ATTRIBUTES = {"mathvariant"}


def _canonical(element: ET.Element) -> tuple:
    """A formula node without layout detail: single-child rows unwrapped, function
    applications and spacing dropped, only the typeface kept of its attributes."""
    while element.tag == "mrow" and len(element) == 1:
        element = element[0]
    children = tuple(
        _canonical(child)
        for child in element
        if not (child.tag == "mo" and _text(child) == _FUNCTION_APPLICATION)
        and child.tag != "mspace"
    )
    typeface = tuple(sorted((k, v) for k, v in element.attrib.items() if k in _LAYOUT_ATTRIBUTES))
    return (element.tag, _text(element).strip(), typeface, children)


def _items(element: ET.Element) -> tuple:
    """The row of items a node lays out side by side (a lone item is a row of one)."""
    canonical = _canonical(element)
    while canonical[0] in {"mrow", "math"} and len(canonical[3]) == 1:
        canonical = canonical[3][0]
    return canonical[3] if canonical[0] in {"mrow", "math"} else (canonical,)


def part_occurs(part: str, equation: str) -> bool:
    """Does the formula ``part`` appear in ``equation`` — as one of its subformulas, or as a
    run of consecutive items in one of its rows? Both are typeset and compared as MathML, so
    spacing and equivalent spellings (``x_{i}`` and ``x_i``) do not matter."""
    try:
        wanted = _items(_presentation(part, False))
        whole = _canonical(_presentation(equation, False))
    except Exception:
        return False
    if not wanted:
        return False

    def search(node: tuple) -> bool:
        row = node[3]
        size = len(wanted)
        if node == wanted[0] and size == 1:
            return True
        if any(row[i : i + size] == wanted for i in range(len(row) - size + 1)):
            return True
        return any(search(child) for child in row)

    return search(whole)


def render_math(latex: str, display: bool = False) -> SafeString:
    """One formula as sanitised MathML (inline by default)."""
    return mark_safe(_math_html(latex, display))  # noqa: S308 - sanitised above


def highlight_code(source: str, language: str = "") -> SafeString:
    """Source code highlighted by Pygments: ``<pre class="highlight"><code>…``."""
    return mark_safe(  # noqa: S308 - Pygments escapes the source
        f'<pre class="highlight"><code>{_highlight_inner(source, language)}</code></pre>'
    )


def _highlight_inner(source: str, language: str) -> str:
    try:
        lexer = get_lexer_by_name(language or "text", stripnl=False)
    except ClassNotFound:
        return html.escape(source)
    return pygments_highlight(source, lexer, _FORMATTER)


def _md_highlight(code: str, lang: str, attrs: str) -> str:
    return _highlight_inner(code, lang.split()[0] if lang else "")


def _md_math(content: str, options: dict) -> str:
    return _math_html(content, bool(options.get("display_mode")))


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _md_highlight})
    md.enable("table").enable("strikethrough")
    md.use(dollarmath_plugin, renderer=_md_math, allow_space=True, allow_digits=False)
    md.use(footnote_plugin)
    # dollarmath wraps maths in <span class="math inline"> / <div class="math block">; keep that.
    return md


def _cache_key(kind: str, source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    return f"render:{RENDERER_VERSION}:{kind}:{digest}"


def render_markdown(source: str) -> SafeString:
    """Markdown with maths and code to sanitised HTML, cached by content."""
    source = source or ""
    if not source.strip():
        return mark_safe("")
    key = _cache_key("md", source)
    rendered = cache.get(key)
    if rendered is None:
        raw = _ALIGN_STYLE.sub(r'<\1 class="align-\2">', _markdown().render(source))
        rendered = sanitize_html(raw)
        cache.set(key, rendered, CACHE_SECONDS)
    return mark_safe(rendered)  # noqa: S308 - sanitised by nh3


def render_markdown_inline(source: str) -> SafeString:
    """One line of Markdown (emphasis, code, links, ``$…$``) as phrasing content with no
    enclosing <p>, to sit inside another element: a "Why it matters" line, a caption."""
    source = (source or "").strip()
    if not source:
        return mark_safe("")
    key = _cache_key("inline", source)
    rendered = cache.get(key)
    if rendered is None:
        rendered = sanitize_html(_markdown().renderInline(source))
        cache.set(key, rendered, CACHE_SECONDS)
    return mark_safe(rendered)  # noqa: S308 - sanitised by nh3


def render_first_block(source: str) -> SafeString:
    """The first fenced code block or display equation of a Markdown text, rendered (empty when
    it has neither): what a listing shows under a note's title."""
    source = source or ""
    key = _cache_key("first", source)
    rendered = cache.get(key)
    if rendered is None:
        rendered = ""
        for token in _markdown().parse(source):
            if token.type == "fence":
                language = token.info.split()[0] if token.info.strip() else ""
                rendered = str(highlight_code(token.content, language))
                break
            if token.type.startswith("math_block"):
                rendered = f'<div class="math block">{_math_html(token.content, True)}</div>'
                break
        cache.set(key, rendered, CACHE_SECONDS)
    return mark_safe(rendered)  # noqa: S308 - Pygments escapes code; maths is sanitised


# --- plain text (email) ---------------------------------------------------------------------

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}  # fmt: skip
_SYMBOLS = {
    "top": "ᵀ", "cdot": "·", "times": "×", "odot": "⊙", "otimes": "⊗", "sum": "Σ", "prod": "Π",
    "infty": "∞", "partial": "∂", "nabla": "∇", "approx": "≈", "neq": "≠", "ne": "≠",
    "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "in": "∈", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "mapsto": "↦", "propto": "∝", "pm": "±", "ldots": "…", "cdots": "⋯",
    "langle": "⟨", "rangle": "⟩", "lVert": "‖", "rVert": "‖", "|": "‖", "log": "log",
    "exp": "exp", "max": "max", "min": "min", "sin": "sin", "cos": "cos", "arg": "arg",
}  # fmt: skip
_SPACING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])|\\[,;:! ]|\\q?quad\b")


def latex_to_text(latex: str) -> str:
    """A readable plain-text rendering of a formula, for email and feeds' text parts."""
    text = _SPACING.sub(" ", latex)
    for _ in range(4):  # nested constructs unwrap from the inside out
        text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)", text)
        text = re.sub(r"\\sqrt\{([^{}]*)\}", r"√(\1)", text)
        text = re.sub(r"\\hat\{([^{}]*)\}", "\\1\u0302", text)
        text = re.sub(r"\\bar\{([^{}]*)\}", "\\1\u0304", text)
        text = re.sub(r"\\tilde\{([^{}]*)\}", "\\1\u0303", text)
        text = re.sub(
            r"\\(?:operatorname|mathrm|mathbf|boldsymbol|mathit|text|mathbb|mathcal)\{([^{}]*)\}",
            r"\1",
            text,
        )
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _GREEK.get(m[1]) or _SYMBOLS.get(m[1], m[1]), text)
    text = text.replace("^{ᵀ}", "ᵀ").replace("^ᵀ", "ᵀ").replace("^\\top", "ᵀ")
    text = text.replace("{", "").replace("}", "")
    return re.sub(r"\s+", " ", text).strip()


_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")


def markdown_to_text(source: str) -> str:
    """Markdown stays as it is (it reads well as text); formulas become readable text."""
    text = _DISPLAY_MATH.sub(lambda m: "\n    " + latex_to_text(m[1]) + "\n", source or "")
    return _INLINE_MATH.sub(lambda m: latex_to_text(m[1]), text)

"""The site's math font, cut down to what mathematics on the site can use.

Latin Modern Math is 391 KB as one woff2, too heavy to send with every page that has an equation.
It is split into two subsets that share one family name and differ in ``unicode-range``, so a
browser downloads the second only when a page uses one of its characters:

* **core**: what almost every equation draws — ASCII, small Greek, math italic Latin and Greek
  (which Chromium draws for a one-letter ``<mi>``), bold small letters (vectors), the common
  operators, arrows and delimiters, and every stretchy variant and assembly part of those in the
  MATH table;
* **extended**: the rest of the mathematics a page can use (Latin-1, upright Greek, all arrows,
  operators, technical and letter-like symbols, every other math alphabet: bold capitals, script,
  fraktur, double-struck, sans, monospace).

The OpenType features ``ssty`` (script-style alternates) and ``aalt`` (access-all-alternates) are
dropped: they double the core's size, Chromium does not apply ``ssty``, and a browser that does
falls back to the base glyph. The full font stays in ``platform/fonts/`` as the source.

``python manage.py subset_math_font`` writes both files; a test checks the committed files are
what it writes and that every character the content's equations produce is covered.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

SOURCE = Path(__file__).resolve().parent / "fonts" / "latinmodern-math.woff2"
STATIC_DIR = Path(__file__).resolve().parent / "static" / "platform" / "fonts"
FAMILY = "Latin Modern Math"


def _chars(text: str) -> list[tuple[int, int]]:
    return [(ord(c), ord(c)) for c in text]


CORE: list[tuple[int, int]] = [
    (0x0020, 0x007E),  # ASCII: digits, upright names (softmax, log), brackets
    (0x00AF, 0x00AF),  # macron: \bar over a letter
    (0x00B7, 0x00B7),  # middle dot
    (0x00D7, 0x00D7),  # ×
    (0x02C6, 0x02C7),
    (0x02D9, 0x02D9),
    (0x02DC, 0x02DC),  # spacing hat, caron, dot and tilde accents
    (0x0300, 0x0308),  # combining grave … diaeresis (hats, bars, dots, tildes)
    (0x2009, 0x200A),  # thin and hair space
    (0x2016, 0x2016),  # ‖
    (0x2026, 0x2026),  # …
    (0x2032, 0x2033),  # ′ ″
    (0x2061, 0x2064),  # invisible function application, times, separator, plus
    (0x210E, 0x210E),  # italic h (the math italic alphabet has a hole there)
    (0x20D7, 0x20D7),  # combining vector arrow
    (0x0391, 0x03A9),  # Greek capitals: upright, as the renderer writes them
    (0x03B1, 0x03C9),  # Greek small, as drawn under mathvariant (which Chromium ignores)
    (0x03D1, 0x03D1),
    (0x03D5, 0x03D5),
    (0x03F5, 0x03F5),  # ϑ ϕ ϵ
    (0x1D41A, 0x1D433),  # math bold a–z (vectors)
    (0x1D434, 0x1D467),  # math italic A–z
    (0x1D6E2, 0x1D71B),  # math italic Greek, which Chromium draws for a one-letter <mi>
    *_chars("ℓℝℕℤ𝔼ℒ𝒪∂∇∑∏∫√∞∈∉∋∀∃∅∩∪⊂⊆⊃⊇±∓−∗∘∙⋅⋯⋮⋱∣∥∼≃≅≈≠≡≤≥≪≫∝⊕⊗⊙⊤⊥"),
    *_chars("←→↑↓↔⇐⇒⇔↦⟵⟶⟨⟩⌈⌉⌊⌋"),
]
EXTENDED: list[tuple[int, int]] = [
    (0x00A0, 0x00FF),  # Latin-1 (¬, ±, ¯, accents)
    (0x0100, 0x017F),  # Latin Extended-A
    (0x0131, 0x0131),
    (0x0237, 0x0237),  # dotless i and j
    (0x02B0, 0x02FF),  # modifier letters (ˆ ˇ ˜)
    (0x0300, 0x036F),  # combining diacritics
    (0x0370, 0x03FF),  # Greek and Coptic
    (0x2000, 0x206F),  # general punctuation
    (0x2070, 0x209F),  # super- and subscripts
    (0x20D0, 0x20FF),  # combining marks for symbols
    (0x2100, 0x214F),  # letter-like symbols
    (0x2190, 0x21FF),  # arrows
    (0x2200, 0x22FF),  # mathematical operators
    (0x2300, 0x23FF),  # technical: brackets, brace and parenthesis pieces
    (0x25A0, 0x25FF),  # geometric shapes
    (0x27C0, 0x27FF),  # misc math symbols A, long arrows
    (0x2980, 0x29FF),  # misc math symbols B
    (0x2A00, 0x2AFF),  # supplemental operators
    (0x1D400, 0x1D7FF),  # every math alphanumeric alphabet
]


def codepoints(ranges: Iterable[tuple[int, int]]) -> set[int]:
    return {c for start, end in ranges for c in range(start, end + 1)}


def _source_cmap() -> dict[int, str]:
    return TTFont(SOURCE).getBestCmap()


def subset_codepoints() -> dict[str, set[int]]:
    """The characters each subset holds: extended is everything the ranges allow minus core."""
    available = set(_source_cmap())
    core = codepoints(CORE) & available
    extended = (codepoints(EXTENDED) & available) - core
    return {"core": core, "extended": extended}


def build(unicodes: Iterable[int]) -> bytes:
    """A woff2 holding exactly these characters with their MATH variants and assembly parts."""
    logging.getLogger("fontTools").setLevel(logging.WARNING)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["dtls"]  # dotless i/j under accents; not ssty, not aalt
    options.notdef_outline = True
    options.hinting = False
    options.drop_tables += ["FFTM"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(unicodes))
    font = TTFont(SOURCE, recalcTimestamp=False)  # the same input gives the same bytes
    subsetter.subset(font)
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()


def _ranges(points: set[int]) -> Iterator[tuple[int, int]]:
    run: list[int] = []
    for c in sorted(points):
        if run and c != run[-1] + 1:
            yield run[0], run[-1]
            run = []
        run.append(c)
    if run:
        yield run[0], run[-1]


def unicode_range(points: set[int]) -> str:
    """The CSS ``unicode-range`` value for a set of code points, merged into runs."""
    return ", ".join(f"U+{a:X}" if a == b else f"U+{a:X}-{b:X}" for a, b in _ranges(points))


def covered(path: Path) -> set[int]:
    return set(TTFont(path).getBestCmap())


CSS_START = "/* math font: written by `manage.py subset_math_font`, do not edit by hand */"
CSS_END = "/* end of math font */"


def font_face_css(points: dict[str, set[int]]) -> str:
    """Two @font-face rules under one family, told apart by unicode-range."""
    rules = [CSS_START]
    for name in ("core", "extended"):
        rules.append(
            "@font-face {\n"
            f'  font-family: "{FAMILY}";\n'
            f'  src: url("fonts/latinmodern-math-{name}.woff2") format("woff2");\n'
            "  font-display: swap;\n"
            f"  unicode-range: {unicode_range(points[name])};\n"
            "}"
        )
    rules.append(CSS_END)
    return "\n".join(rules)


STYLESHEETS = ("site.css", "admin_preview.css")  # in platform/static/platform/


def write(
    *, static_dir: Path = STATIC_DIR, stylesheets: Sequence[Path] | None = None
) -> dict[str, int]:
    """Write both subsets and the @font-face block of the stylesheets that use the font.

    Side effects: overwrites ``latinmodern-math-{core,extended}.woff2`` in ``static_dir`` and the
    block between the markers in each stylesheet (the site's and the admin preview's by
    default). Returns the bytes of each subset.
    """
    if stylesheets is None:
        stylesheets = [static_dir.parent / name for name in STYLESHEETS]
    points = subset_codepoints()
    sizes = {}
    for name, chars in points.items():
        data = build(chars)
        (static_dir / f"latinmodern-math-{name}.woff2").write_bytes(data)
        sizes[name] = len(data)
    for stylesheet in stylesheets:
        css = stylesheet.read_text()
        start, end = css.index(CSS_START), css.index(CSS_END) + len(CSS_END)
        stylesheet.write_text(css[:start] + font_face_css(points) + css[end:])
    return sizes

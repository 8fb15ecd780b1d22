"""The typesetting corpus: the flaws a learner saw, each pinned by the MathML it must produce, and
every formula in the loaded content (equations, labelled parts, glossary symbols, ``$…$`` in
chapters, questions and notes) typeset without an error, raw TeX or a missing source.

The content cases iterate over whatever content is loaded, so chapters added later join the
corpus without editing this file.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from courses import contentfiles
from courses.formulas import REGRESSION_CASES, all_formulas
from courses.models import EquationPart
from platform.rendering import PLACEHOLDER, part_occurs, render_math
from tests.support.mathml import without_tex_source

FA = "\u2061"  # FUNCTION APPLICATION
TIGHT = f'<mo lspace="0" rspace="0">{FA}</mo>'
THIN = f'<mo lspace="0" rspace="0.1667em">{FA}</mo>'
BIG_CLOSE = '<mpadded voffset="-0.050em"><mo stretchy="false" mathsize="1.2em">)</mo></mpadded>'

# (latex, fragments the MathML must contain, fragments it must not contain)
CASES = [
    pytest.param(
        r"\operatorname{Attention}(Q, K, V)",
        [f'<mi>Attention</mi>{TIGHT}<mo stretchy="false">(</mo><mi>Q</mi>'],
        ["<mo>Attention</mo>"],
        id="operatorname-before-bracket-is-tight",
    ),
    pytest.param(
        r"\mathrm{LN}(x)",
        [f'<mi>LN</mi>{TIGHT}<mo stretchy="false">(</mo>'],
        ['<mi mathvariant="normal">L</mi>'],
        id="mathrm-name-is-one-word-and-tight",
    ),
    pytest.param(
        r"\operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V",
        ['<mi>softmax</mi><mspace width="-0.1667em"></mspace><mrow><mo stretchy="true"'],
        ["negativethinmathspace"],
        id="named-space-becomes-em",
    ),
    pytest.param(
        r"\log q_i",
        [f"<mi>log</mi>{THIN}<msub><mi>q</mi><mi>i</mi></msub>"],
        [],
        id="log-has-a-thin-space-before-its-argument",
    ),
    pytest.param(
        r"\exp(x) + \max(a, b)",
        [f"<mi>exp</mi>{TIGHT}<mo", f"<mi>max</mi>{TIGHT}<mo"],
        ["<mo>max</mo>"],
        id="known-functions-tight-before-brackets",
    ),
    pytest.param(
        r"\max_i x_i",
        [f'<msub><mo lspace="0" rspace="0">max</mo><mi>i</mi></msub>{THIN}<msub>'],
        [],
        id="operator-with-limits-then-thin-space",
    ),
    pytest.param(
        r"\log \mathbb{E}[\cdot] = 1",
        [f"<mi>log</mi>{THIN}<mi>"],
        [],
        id="log-before-a-symbol",
    ),
    pytest.param(
        r"\mathbb{E}\big[(y - \hat f(x))^2\big] = \big(a - b\big)^2",
        [
            f"<msup>{BIG_CLOSE}<mn>2</mn></msup>",
            '<mi>\U0001d53c</mi><mpadded voffset="-0.050em"><mo stretchy="false" '
            'mathsize="1.2em">[</mo></mpadded>',
        ],
        ["minsize", 'stretchy="true"'],
        id="big-bracket-sized-on-the-axis-with-exponent",
    ),
    pytest.param(
        r"\mathrm{Var}\big(\hat f(x)\big)",
        [f'<mi>Var</mi>{TIGHT}<mpadded voffset="-0.050em">'],
        [],
        id="operator-name-tight-before-big-bracket",
    ),
    pytest.param(
        r"\Big(x\Big)^2",
        [
            '<msup><mpadded voffset="-0.156em"><mo stretchy="false" mathsize="1.623em">)</mo>'
            "</mpadded><mn>2</mn></msup>"
        ],
        ["minsize"],
        id="Big-bracket-with-exponent",
    ),
    pytest.param(
        r"\bigl( x \bigr)",
        [
            '<mpadded voffset="-0.050em"><mo stretchy="false" mathsize="1.2em" fence="true">'
            "(</mo></mpadded><mi>x</mi>"
        ],
        ["minsize"],
        id="bigl-bigr-sized",
    ),
    pytest.param(
        r"\sqrt{}",
        [f'<msqrt><mi mathvariant="normal">{PLACEHOLDER}</mi></msqrt>'],
        ["<msqrt><mrow></mrow></msqrt>"],
        id="empty-radical-has-a-placeholder",
    ),
    pytest.param(
        r"^\top",
        ['<semantics><mrow><mi mathvariant="normal">\u22a4</mi></mrow>'],
        ["<msup>"],
        id="lone-transpose-at-normal-size",
    ),
    pytest.param(
        r"A = Q \Lambda Q^{-1}",
        ['<mi mathvariant="normal">\u039b</mi>'],
        ["<mi>\u039b</mi>"],
        id="capital-greek-upright",
    ),
    pytest.param(
        r"\hat{m}_t + \tilde{x} + \widehat{xy}",
        [
            '<mover accent="true"><mrow><mi>m</mi></mrow><mo stretchy="false">\u02c6</mo></mover>',
            '<mover><mrow><mi>x</mi></mrow><mo stretchy="false">\u02dc</mo></mover>',
            "<mover><mrow><mi>x</mi><mi>y</mi></mrow><mo>^</mo></mover>",
        ],
        [],
        id="hat-one-glyph-wide-widehat-stretches",
    ),
    pytest.param(
        r"\int f(x)\,\mathrm{d}x + \mathrm{e}^x",
        ['<mi mathvariant="normal">d</mi><mi>x</mi>', '<msup><mi mathvariant="normal">e</mi>'],
        [],
        id="mathrm-single-letter-upright",
    ),
    pytest.param(
        r"QK^\top",
        ['<msup><mi>K</mi><mi mathvariant="normal">\u22a4</mi></msup>'],
        ["<mo>\u22a4</mo>"],
        id="transpose-is-an-ordinary-symbol",
    ),
]


class _MathText(HTMLParser):
    """The text nodes of a formula outside its annotation, and its elements."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.tags: list[str] = []
        self._in_annotation = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_annotation = tag == "annotation"

    def handle_endtag(self, tag):
        if tag == "annotation":
            self._in_annotation = False

    def handle_data(self, data):
        if not self._in_annotation:
            self.texts.append(data)


RAW_COMMAND = re.compile(r"\\[A-Za-z]+")


def typesetting_faults(latex: str, display: bool = False) -> list[str]:
    """What is wrong with the MathML of ``latex``: an error, raw TeX in a text node, a formula
    without its source."""
    out = str(render_math(latex, display=display))
    faults = []
    if not out.startswith("<math"):
        return [f"not MathML: {out[:80]}"]
    parsed = _MathText()
    parsed.feed(out)
    if "merror" in parsed.tags:
        faults.append("<merror>")
    raw = [text for text in parsed.texts if RAW_COMMAND.search(text)]
    if raw:
        faults.append(f"raw TeX in text: {raw}")
    if not out.startswith(f'<math display="{"block" if display else "inline"}" alttext="'):
        faults.append("no alttext")
    alttext = re.match(r'<math[^>]*alttext="([^"]*)"', out)
    if alttext is None or html.unescape(alttext[1]) != latex.strip():
        faults.append("alttext is not the source")
    annotation = '<annotation encoding="application/x-tex">'
    if parsed.tags[:2] != ["math", "semantics"] or annotation not in out:
        faults.append("no <semantics> with an x-tex annotation")
    return faults


def test_typesetting_cases_are_all_in_the_gallery():
    assert {case.values[0] for case in CASES} == set(REGRESSION_CASES)


@pytest.mark.parametrize(("latex", "wanted", "unwanted"), CASES)
def test_typesetting_case_produces_expected_mathml(latex, wanted, unwanted):
    out = str(render_math(latex))
    for fragment in wanted:
        assert fragment in out
    for fragment in unwanted:
        assert fragment not in out
    assert typesetting_faults(latex) == []
    assert typesetting_faults(latex, display=True) == []


def test_typesetting_annotation_carries_the_source_escaped():
    out = str(render_math(r"a < b \text{ & } c"))
    assert 'alttext="a &lt; b \\text{ &amp; } c"' in out
    assert '<annotation encoding="application/x-tex">a &lt; b \\text{ &amp; } c</annotation>' in out
    assert RAW_COMMAND.findall(without_tex_source(out)) == []


@pytest.mark.django_db
def test_typesetting_every_formula_in_the_content_is_clean():
    contentfiles.load_demo()
    formulas = list(all_formulas())
    assert len(formulas) > 300  # equations, parts, symbols and $…$ in text all counted
    faults = {
        f"{formula.where}: {formula.latex}": problems
        for formula in formulas
        if (problems := typesetting_faults(formula.latex, formula.display))
    }
    assert faults == {}
    parts = list(EquationPart.objects.select_related("equation"))
    assert parts
    strays = [p.latex for p in parts if not part_occurs(p.latex, p.equation.latex)]
    assert strays == []


@pytest.mark.parametrize(
    ("part", "equation", "occurs"),
    [
        (r"\alpha", r"y = \alpha x", True),
        ("x_{i}", "y = x_i + 1", True),  # spelled differently, typeset the same
        (r"\sum_{j=1}^{n}", r"\frac{a}{\sum_{j=1}^{n} b}", True),
        (r"QK^\top", r"\frac{QK^\top}{2}", True),
        (r"\operatorname{LN}(\mathbf{x})", r"\operatorname{LN}(\mathbf{x}) = \gamma", True),
        ("x + y", "a = x + y + z", True),
        (r"^\top", r"(R_m q)^\top", True),
        ("a", r"\alpha", False),  # a letter inside a command's name is not the letter
        ("x + z", "a = x + y + z", False),  # not consecutive
        (r"\alpha_{zz}", r"y = \alpha x", False),
        (r"\mathbf{x}", "y = x", False),  # the typeface matters
    ],
)
def test_typesetting_part_occurs_compares_typeset_formulas(part, equation, occurs):
    assert part_occurs(part, equation) is occurs

"""The math font subsets: what they hold, that they are what the command writes, who loads them."""

import gzip
import html
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from platform import mathfont, rendering

FONTS = mathfont.STATIC_DIR
CORE = FONTS / "latinmodern-math-core.woff2"
EXTENDED = FONTS / "latinmodern-math-extended.woff2"

# Chromium draws a one-letter <mi> in the math italic alphabet (MathML Core's math-auto).
_ITALIC_EXCEPTIONS = {  # italic h lives in Letterlike Symbols; the rest follow the Greek block
    "h": 0x210E, "ϵ": 0x1D716, "ϑ": 0x1D717, "ϰ": 0x1D718, "ϕ": 0x1D719, "ϱ": 0x1D71A,
    "ϖ": 0x1D71B, "∂": 0x1D715, "∇": 0x1D6FB, "ı": 0x1D6A4, "ȷ": 0x1D6A5,
}  # fmt: skip


def _italic(char: str) -> int:
    if char in _ITALIC_EXCEPTIONS:
        return _ITALIC_EXCEPTIONS[char]
    code = ord(char)
    if "A" <= char <= "Z":
        return 0x1D434 + code - ord("A")
    if "a" <= char <= "z":
        return 0x1D44E + code - ord("a")
    if "α" <= char <= "ω":
        return 0x1D6FC + code - ord("α")
    if "Α" <= char <= "Ω":
        return 0x1D6E2 + code - ord("Α")
    return code


def drawn_codepoints(mathml: str) -> set[int]:
    """The characters a browser draws for this MathML with the math font."""
    points: set[int] = set()
    for tag, attrs, text in re.findall(r"<(m[ion]|mtext)([^>]*)>([^<]*)</\1>", mathml):
        text = html.unescape(text)
        if tag == "mi" and len(text) == 1 and "mathvariant" not in attrs:
            points.add(_italic(text))
        else:
            points.update(ord(c) for c in text if not c.isspace())
    return points


def _content_mathml() -> str:
    from courses.models import Chapter, Choice, Equation, EquationPart, Question, Symbol
    from notebook.models import Note

    parts = [rendering.render_math(e.latex, display=True) for e in Equation.objects.all()]
    parts += [rendering.render_math(p.latex) for p in EquationPart.objects.all()]
    parts += [rendering.render_math(s.latex) for s in Symbol.objects.all() if s.latex]
    markdown = [n.body for n in Note.objects.all()]
    markdown += [e.explanation for e in Equation.objects.all()]
    for c in Chapter.objects.all():
        markdown += [c.summary, c.idea, c.try_it_intro]
    for q in Question.objects.all():
        markdown += [q.prompt, q.explanation]
    markdown += [c.explanation for c in Choice.objects.all()]
    parts += [rendering.render_markdown(text) for text in markdown if text]
    return "".join(str(p) for p in parts)


@pytest.fixture
def demo_mathml(db):
    call_command("load_content", "--no-check", verbosity=0)
    return _content_mathml()


def test_every_character_the_content_draws_is_in_the_core_subset(demo_mathml):
    drawn = drawn_codepoints(demo_mathml)
    assert len(drawn) > 80  # the demo's equations, not an empty render
    # The renderer's placeholder in an empty radical (⬚) is in no math font: the browser takes
    # it from a text font, which is fine for a placeholder.
    missing = drawn - mathfont.covered(CORE) - {ord("⬚")}
    # Every equation of the shipped content is drawn from the 45 KB core alone.
    assert not missing, sorted(f"U+{c:04X} {chr(c)}" for c in missing)


def test_the_subsets_cover_what_maths_can_use_and_their_ranges_do_not_overlap():
    declared = mathfont.subset_codepoints()
    # Disjoint ranges: a character of the core never makes the browser fetch the extended file.
    assert not (declared["core"] & declared["extended"])
    together = mathfont.covered(CORE) | mathfont.covered(EXTENDED)
    for char in "αβγθλΣΛ∑∏∫√∞∂∇∈≈≤≥⊙⊗⊤←→⇒⟨⟩‖𝔼ℝ𝒪ℓ×·":
        assert ord(char) in together, char
    for alphabet_start in (0x1D400, 0x1D434, 0x1D49C, 0x1D504, 0x1D538, 0x1D5A0, 0x1D6E2):
        assert alphabet_start in together
    # Stretchy brackets keep their size variants and assembly pieces (the MATH table).
    from fontTools.ttLib import TTFont

    font = TTFont(CORE)
    variants = font["MATH"].table.MathVariants.VertGlyphCoverage.glyphs
    assert {"parenleft", "bracketleft", "braceleft", "radical", "uni27E8"} <= set(variants)


def test_committed_subsets_are_what_the_command_writes(tmp_path):
    copies = []
    for name in mathfont.STYLESHEETS:
        (tmp_path / name).write_text((FONTS.parent / name).read_text())
        copies.append(tmp_path / name)
    mathfont.write(static_dir=tmp_path, stylesheets=copies)
    assert (tmp_path / CORE.name).read_bytes() == CORE.read_bytes()
    assert (tmp_path / EXTENDED.name).read_bytes() == EXTENDED.read_bytes()
    for copy in copies:
        assert copy.read_text() == (FONTS.parent / copy.name).read_text()
        assert "latinmodern-math-core.woff2" in copy.read_text()


def test_subsets_are_a_fraction_of_the_full_font():
    assert CORE.stat().st_size < 50 * 1024
    assert CORE.stat().st_size + EXTENDED.stat().st_size < mathfont.SOURCE.stat().st_size * 0.5


def test_css_unicode_ranges_match_each_file():
    css = (FONTS.parent / "site.css").read_text()
    for path in (CORE, EXTENDED):
        rule = re.search(r"@font-face \{[^}]*" + re.escape(path.name) + r"[^}]*\}", css)
        assert rule, path.name
        declared = re.search(r"unicode-range: ([^;]+);", rule.group(0)).group(1)
        name = "core" if path == CORE else "extended"
        points = mathfont.subset_codepoints()[name]
        assert declared == mathfont.unicode_range(points)
        assert points <= mathfont.covered(path)


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["home", "courses:index", "account_signup", "account_login"])
def test_pages_without_maths_do_not_preload_the_math_font(client, name):
    body = client.get(reverse(name)).content.decode()
    assert "latinmodern-math" not in body


@pytest.mark.django_db
def test_chapter_preloads_only_the_core_math_font(client):
    from tests.courses.factories import ChapterFactory, EquationFactory

    chapter = ChapterFactory()
    EquationFactory(chapter=chapter, latex=r"\sqrt{d_k}")
    body = client.get(chapter.get_absolute_url()).content.decode()
    assert body.count('rel="preload"') == 1
    assert "latinmodern-math-core" in body and "latinmodern-math-extended" not in body
    # Every stylesheet is in <head>, and no script blocks parsing.
    assert 'rel="stylesheet"' not in body.split("</head>")[1]
    scripts = re.findall(r"<script[^>]*>", body)
    assert scripts and all(" defer" in tag for tag in scripts), scripts


@pytest.mark.django_db
def test_pages_are_gzipped_for_clients_that_accept_it(client):
    plain = client.get(reverse("courses:index"))
    assert "Content-Encoding" not in plain.headers
    packed = client.get(reverse("courses:index"), headers={"accept-encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    unpacked = gzip.decompress(packed.content)
    # The same page (each response carries its own CSRF token, so compare around it).
    assert abs(len(unpacked) - len(plain.content)) < 100
    assert (
        unpacked.split(b"<main")[1].split(b"</main>")[0]
        == (plain.content.split(b"<main")[1].split(b"</main>")[0])
    )
    assert len(packed.content) < len(plain.content) / 2

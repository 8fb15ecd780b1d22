"""Every equation of the seed chapter page, and every demo chapter, is typeset: no raw TeX left."""

from __future__ import annotations

import re

import pytest

from courses.explorable import unmark
from courses.models import Chapter
from platform.rendering import render_markdown, render_math
from tests.support.mathml import without_tex_source

SEED_EQUATIONS = [
    r"\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}"
    r"{\sqrt{d_k}}\right)V",
    r"m_t = \beta_1 m_{t-1} + (1 - \beta_1)\,g_t, \qquad v_t = \beta_2 v_{t-1} + "
    r"(1 - \beta_2)\,g_t^2",
    r"\hat{m}_t = \frac{m_t}{1 - \beta_1^{\,t}}, \quad \hat{v}_t = \frac{v_t}{1 - \beta_2^{\,t}},"
    r" \qquad \theta_t = \theta_{t-1} - \eta\,\frac{\hat{m}_t}{\sqrt{\hat{v}_t} + \epsilon}",
    r"\operatorname{LN}(\mathbf{x}) = \boldsymbol{\gamma} \odot \frac{\mathbf{x} - \mu}"
    r"{\sqrt{\sigma^2 + \epsilon}} + \boldsymbol{\beta}, \quad \mu = \frac{1}{d}\sum_{i} x_i, "
    r"\quad \sigma^2 = \frac{1}{d}\sum_{i}(x_i - \mu)^2",
]
TEX_COMMAND = re.compile(r"\\[A-Za-z]+")


@pytest.mark.parametrize("latex", SEED_EQUATIONS)
@pytest.mark.parametrize("display", [True, False])
def test_seed_equation_renders_as_mathml(latex, display):
    html = str(render_math(latex, display=display))
    assert html.startswith("<math")
    assert TEX_COMMAND.findall(without_tex_source(html)) == []
    assert "math-error" not in html


@pytest.mark.parametrize("latex", SEED_EQUATIONS)
def test_seed_equation_in_markdown_renders_as_mathml(latex):
    html = str(render_markdown(f"Before.\n\n$${latex}$$\n\nAnd inline ${latex}$ too."))
    assert html.count("<math") == 2
    assert TEX_COMMAND.findall(without_tex_source(html)) == []


def visible_text_outside_code(html: str) -> str:
    html = re.sub(r"<(pre|code|script)\b.*?</\1>", "", html, flags=re.S)
    return without_tex_source(html)


@pytest.mark.django_db
def test_demo_chapter_pages_have_no_raw_tex(client, demo_course):
    chapters = list(Chapter.objects.published().select_related("course"))
    assert len(chapters) == 11
    for chapter in chapters:
        html = client.get(chapter.get_absolute_url()).content.decode()
        leftovers = TEX_COMMAND.findall(visible_text_outside_code(html))
        assert leftovers == [], (chapter.slug, leftovers)
        assert "math-error" not in html
        assert "$" not in visible_text_outside_code(html).replace("$$", "")


@pytest.mark.django_db
def test_capstone_page_shows_the_seed_equations_typeset(client, demo_course):
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    html = client.get(chapter.get_absolute_url()).content.decode()
    # The page's formulas carry the explorable marks (courses.explorable); without them they
    # are exactly what the renderer writes.
    html = unmark(html)
    for latex in SEED_EQUATIONS:
        assert str(render_math(latex, display=True)) in html

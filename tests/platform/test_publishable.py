"""The Publishable contract shared by chapters and notes: the first-publication stamp and
``published_since``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from courses.models import Chapter
from notebook.models import Note
from tests.courses.factories import ChapterFactory
from tests.notebook.factories import NoteFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("factory", [ChapterFactory, NoteFactory])
def test_publishable_save_with_update_fields_stamps_published_at(factory):
    row = factory(published=False)
    row.published = True
    row.save(update_fields=["published"])
    row.refresh_from_db()
    assert row.published_at is not None


def test_publishable_published_since_is_newer_published_rows_oldest_first():
    now = timezone.now()
    stamps = {"old": now - timedelta(days=9), "b": now - timedelta(days=1), "a": now}
    for title, when in stamps.items():
        note = NoteFactory(title=title)
        Note.objects.filter(pk=note.pk).update(published_at=when)
    NoteFactory(title="draft", published=False)
    since = now - timedelta(days=2)
    assert [n.title for n in Note.objects.published_since(since)] == ["b", "a"]


def test_publishable_published_since_uses_the_models_own_published_rule():
    chapter = ChapterFactory(course__published=False)
    since = timezone.now() - timedelta(days=1)
    assert chapter.published_at is not None  # published itself, in a hidden course
    assert list(Chapter.objects.published_since(since)) == []

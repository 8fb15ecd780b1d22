"""courses/page_cache.py on its own: versions, keys, render-once and the CSRF placeholder."""

from __future__ import annotations

import uuid

import pytest
from django.test import RequestFactory

from courses import page_cache

from .factories import ChapterFactory

pytestmark = pytest.mark.django_db


def test_public_version_is_cached_and_forgotten_when_the_chapter_is_edited(
    chapter, django_assert_num_queries
):
    chapter.refresh_from_db()  # signals moved updated_at when its parts were added
    chapter.course.refresh_from_db()
    slugs = (chapter.course.slug, chapter.slug)
    with django_assert_num_queries(1):
        version = page_cache.public_version(*slugs)
    assert version == (chapter.pk, chapter.updated_at, chapter.course.updated_at)
    with django_assert_num_queries(0):
        assert page_cache.public_version(*slugs) == version
    chapter.title = "Attention, renamed"
    chapter.save()
    assert page_cache.public_version(*slugs).updated_at > version.updated_at


def test_public_version_is_none_for_an_unpublished_chapter():
    draft = ChapterFactory(published=False)
    assert page_cache.public_version(draft.course.slug, draft.slug) is None


def test_article_key_depends_on_what_the_page_shows_about_its_reader(chapter):
    signed_in = page_cache.LearnerState(signed_in=True, done=frozenset(), progress=None)
    one_done = page_cache.LearnerState(signed_in=True, done=frozenset({1}), progress=None)
    keys = {
        page_cache.article_key(chapter, state)
        for state in (page_cache.NEW_READER, signed_in, one_done)
    }
    assert len(keys) == 3
    assert all(page_cache.templates_fingerprint() in key for key in keys)


def test_cached_renders_once_per_key():
    key = f"test:{uuid.uuid4()}"
    calls = []

    def render() -> str:
        calls.append(key)
        return "<p>rendered</p>"

    assert page_cache.cached(key, render) == "<p>rendered</p>"
    assert page_cache.cached(key, render) == "<p>rendered</p>"
    assert calls == [key]


def test_with_csrf_token_puts_the_readers_token_in_place_of_the_placeholder():
    request = RequestFactory().get("/")
    html = f'<input name="csrfmiddlewaretoken" value="{page_cache.CSRF_PLACEHOLDER}">'
    filled = page_cache.with_csrf_token(html, request)
    assert page_cache.CSRF_PLACEHOLDER not in filled
    assert request.META["CSRF_COOKIE"]  # the token was issued for this request
    assert len(filled) == len(html) - len(page_cache.CSRF_PLACEHOLDER) + 64

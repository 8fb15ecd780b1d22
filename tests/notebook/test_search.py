"""Search over titles, summaries and bodies: ranked full text on PostgreSQL, icontains else."""

import pytest
from django.conf import settings
from django.urls import reverse

from notebook.models import Note
from tests.notebook.factories import NoteFactory

pytestmark = pytest.mark.django_db

SEARCH = reverse("notebook:search")


@pytest.fixture
def notes():
    return {
        "title": NoteFactory(title="Rotary embeddings", summary="Positions.", body="Angles."),
        "summary": NoteFactory(title="Positions", summary="Rotary angles per pair.", body="x"),
        "body": NoteFactory(title="Caching", summary="Speed.", body="Works with rotary too."),
        "other": NoteFactory(title="Variance", summary="Bessel.", body="Divide by n - 1."),
        "draft": NoteFactory(title="Rotary draft", published=False),
    }


def test_search_finds_title_summary_and_body(client, notes):
    response = client.get(SEARCH, {"q": "rotary"})
    found = {n.pk for n in response.context["notes"]}
    assert found == {notes["title"].pk, notes["summary"].pk, notes["body"].pk}


@pytest.mark.skipif(not settings.ON_POSTGRES, reason="ranking is PostgreSQL full text search")
def test_search_ranks_title_matches_first_on_postgres(client, notes):
    response = client.get(SEARCH, {"q": "rotary"})
    assert [n.pk for n in response.context["notes"]] == [
        notes["title"].pk,
        notes["summary"].pk,
        notes["body"].pk,
    ]
    assert Note.objects.published().search("rotaries").count() == 3  # stemmed


@pytest.mark.skipif(settings.ON_POSTGRES, reason="the SQLite fallback")
def test_search_on_sqlite_is_icontains_over_all_words(client, notes):
    assert list(Note.objects.published().search("ROTARY angles")) == [
        notes["summary"],
        notes["title"],
    ]


@pytest.mark.parametrize(
    "query",
    ["'", '"', "&|!():*", "rotary & | !", "-", "a" * 5000, "\x00", "<script>", "or or or", "%_%"],
)
def test_search_malformed_queries_never_fail(client, notes, query):
    response = client.get(SEARCH, {"q": query})
    assert response.status_code == 200


def test_search_empty_query_shows_form_only(client, notes):
    response = client.get(SEARCH, {"q": "   "})
    assert response.status_code == 200
    assert response.context["notes"] == []


def test_search_page_past_the_end_is_404(client, notes):
    assert client.get(SEARCH, {"q": "rotary", "page": 5}).status_code == 404

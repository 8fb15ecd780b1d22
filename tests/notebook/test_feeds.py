"""RSS and Atom feeds parse cleanly, keep the index order, carry categories and stable ids."""

import datetime as dt
from urllib.parse import urlsplit

import feedparser
import pytest
from django.conf import settings
from django.urls import reverse

from tests.notebook.factories import NoteFactory, TopicFactory

pytestmark = pytest.mark.django_db

FEEDS = ["notebook:feed_rss", "notebook:feed_atom"]


@pytest.fixture
def notes():
    rope = TopicFactory(name="RoPE", slug="rope")
    maths = TopicFactory(name="Math", slug="math")
    return [
        NoteFactory(title="Oldest", date=dt.date(2025, 1, 1), topics=[maths]),
        NoteFactory(title="Middle", date=dt.date(2026, 1, 1), topics=[rope, maths]),
        NoteFactory(title="Newest", date=dt.date(2026, 6, 1), topics=[rope]),
        NoteFactory(title="Draft", published=False, topics=[rope]),
    ]


def parse(client, url):
    response = client.get(url)
    assert response.status_code == 200
    feed = feedparser.parse(response.content)
    assert feed.bozo == 0, feed.get("bozo_exception")
    return response, feed


@pytest.mark.parametrize("name", FEEDS)
def test_feed_parses_in_order_with_categories(client, notes, name):
    _, feed = parse(client, reverse(name))
    assert [e.title for e in feed.entries] == ["Newest", "Middle", "Oldest"]
    middle = feed.entries[1]
    assert sorted(tag.term for tag in middle.tags) == ["Math", "RoPE"]
    assert middle.link.startswith("http")
    assert middle.link.endswith(notes[1].get_absolute_url())
    host = urlsplit(settings.SITE_URL).hostname
    assert middle.id == f"tag:{host},2026:notebook/note/{notes[1].pk}"
    assert middle.published_parsed[:3] == (2026, 1, 1)


def test_atom_entries_have_updated_in_utc(client, notes):
    response, feed = parse(client, reverse("notebook:feed_atom"))
    xml = response.content.decode()
    assert xml.count("<updated>") == 4  # the feed and three entries
    for entry in feed.entries:
        assert entry.updated.endswith("+00:00") or entry.updated.endswith("Z")
        assert entry.updated_parsed >= entry.published_parsed


def test_feed_ids_are_stable_across_slug_changes(client, notes):
    _, before = parse(client, reverse("notebook:feed_atom"))
    notes[2].slug = "renamed"
    notes[2].save()
    _, after = parse(client, reverse("notebook:feed_atom"))
    assert [e.id for e in before.entries] == [e.id for e in after.entries]


@pytest.mark.parametrize("name", ["notebook:topic_feed_rss", "notebook:topic_feed_atom"])
def test_topic_feed_lists_only_its_notes(client, notes, name):
    _, feed = parse(client, reverse(name, args=["rope"]))
    assert [e.title for e in feed.entries] == ["Newest", "Middle"]
    assert "RoPE" in feed.feed.title


def test_topic_feed_unknown_topic_is_404(client):
    assert client.get(reverse("notebook:topic_feed_rss", args=["nope"])).status_code == 404


def test_feeds_are_discoverable_from_the_index(client, notes):
    html = client.get(reverse("notebook:index")).content.decode()
    rss = reverse("notebook:feed_rss")
    atom = reverse("notebook:feed_atom")
    assert f'type="application/rss+xml" title="From Scratch notebook (RSS)" href="{rss}"' in html
    assert f'type="application/atom+xml" title="From Scratch notebook (Atom)" href="{atom}"' in html

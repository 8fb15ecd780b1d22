"""RSS 2.0 and Atom feeds of the notebook, for all notes and per topic.

Every entry has a stable id (a tag: URI built from the note's primary key, so renaming a slug
does not make readers see a new entry), a publication date and an ``updated`` date in UTC, and
its topics as categories. Descriptions are rendered by ``notebook/_feed_entry.html``.
"""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed, Rss201rev2Feed, SyndicationFeed

from .models import Note, Topic

FEED_SIZE = 30


def _authority() -> str:
    return urlsplit(settings.SITE_URL).hostname or "localhost"


class NotesRssFeed(Feed):
    feed_type: type[SyndicationFeed] = Rss201rev2Feed
    title = "From Scratch — notebook"
    description = (
        "Short dated notes on the mathematics of machine learning: derivations, code, bugs."
    )

    def link(self) -> str:
        return reverse("notebook:index")

    def feed_url(self) -> str:
        return reverse("notebook:feed_rss")

    def items(self):
        return Note.objects.published().with_marks()[:FEED_SIZE]

    def item_title(self, item: Note) -> str:
        return item.title

    def item_description(self, item: Note) -> str:
        """Valid HTML: the why line (inline, not a <p> in a <p>), the Verified and Corrected
        marks, the body (its formulas carry their LaTeX as alttext and annotation, for readers
        that cannot show MathML), and the dated corrections."""
        return render_to_string("notebook/_feed_entry.html", {"note": item})

    def item_link(self, item: Note) -> str:
        return item.get_absolute_url()

    def item_guid(self, item: Note) -> str:
        return f"tag:{_authority()},2026:notebook/note/{item.pk}"

    item_guid_is_permalink = False

    def item_pubdate(self, item: Note) -> dt.datetime:
        return dt.datetime.combine(item.date, dt.time(12, 0), tzinfo=dt.UTC)

    def item_updateddate(self, item: Note) -> dt.datetime:
        updated = item.updated_at.astimezone(dt.UTC) if item.updated_at else None
        published = self.item_pubdate(item)
        return max(published, updated) if updated else published

    def item_categories(self, item: Note) -> list[str]:
        return [topic.name for topic in item.topics.all()]


class NotesAtomFeed(NotesRssFeed):
    feed_type = Atom1Feed
    subtitle = NotesRssFeed.description

    def feed_url(self) -> str:
        return reverse("notebook:feed_atom")


class TopicRssFeed(NotesRssFeed):
    def get_object(self, request, slug: str) -> Topic:
        return get_object_or_404(Topic, slug=slug)

    def title(self, obj: Topic) -> str:  # type: ignore[override]
        return f"From Scratch — notebook: {obj.name}"

    def description(self, obj: Topic) -> str:  # type: ignore[override]
        return obj.description or f"Notes on {obj.name}."

    def link(self, obj: Topic) -> str:  # type: ignore[override]
        return obj.get_absolute_url()

    def feed_url(self, obj: Topic) -> str:  # type: ignore[override]
        return reverse("notebook:topic_feed_rss", kwargs={"slug": obj.slug})

    def categories(self, obj: Topic) -> list[str]:
        return [obj.name]

    def items(self, obj: Topic):  # type: ignore[override]
        return Note.objects.published().in_topic(obj).with_marks()[:FEED_SIZE]


class TopicAtomFeed(TopicRssFeed):
    feed_type = Atom1Feed

    def subtitle(self, obj: Topic) -> str:
        return self.description(obj)

    def feed_url(self, obj: Topic) -> str:  # type: ignore[override]
        return reverse("notebook:topic_feed_atom", kwargs={"slug": obj.slug})

"""The archive feed validates (well-formed XML, feedparser without bozo), its entries are valid
HTML and their formulas carry the LaTeX source."""

from __future__ import annotations

from xml.dom import minidom

import feedparser
import pytest
from django.urls import reverse
from django.utils import timezone

from newsletter.models import Issue
from tests.newsletter.factories import IssueFactory
from tests.notebook.test_feed_entries import html_faults

pytestmark = pytest.mark.django_db


def test_archive_feed_validates_with_formula_sources(client):
    IssueFactory(status=Issue.Status.SENT, finished_at=timezone.now())
    response = client.get(reverse("newsletter:feed"))
    minidom.parseString(response.content)  # noqa: S318 - our own feed
    feed = feedparser.parse(response.content)
    assert feed.bozo == 0
    (entry,) = feed.entries
    assert html_faults(entry.description) == []
    assert 'alttext="\\frac{QK^\\top}{\\sqrt{d_k}}"' in entry.description

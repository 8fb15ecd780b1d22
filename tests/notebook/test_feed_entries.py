"""Feed entries are valid HTML (no <p> in a <p>, every element closed), carry the Verified and
Corrected marks and the dated corrections, and their formulas carry the LaTeX source."""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser
from xml.dom import minidom

import feedparser
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from tests.notebook.factories import (
    CorrectionFactory,
    NoteFactory,
    SnippetCheckFactory,
    SnippetRunFactory,
)

pytestmark = pytest.mark.django_db

FEEDS = ["notebook:feed_rss", "notebook:feed_atom"]
VOID = {"br", "hr", "img", "input", "wbr", "col", "area", "source", "mspace", "none"}
BLOCK = {"p", "div", "ul", "ol", "pre", "table", "h1", "h2", "h3", "h4", "blockquote", "section"}


class _Nesting(HTMLParser):
    """Records the faults of an HTML fragment: a block inside a <p>, an element left open or
    closed out of order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.faults: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in BLOCK and "p" in self.stack:
            self.faults.append(f"<{tag}> inside <p>")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.faults.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def close(self):
        super().close()
        if self.stack:
            self.faults.append(f"left open: {self.stack}")


def html_faults(fragment: str) -> list[str]:
    checker = _Nesting()
    checker.feed(fragment)
    checker.close()
    return checker.faults


@pytest.fixture
def note():
    note = NoteFactory(
        title="Scaling scores",
        summary=r"Dividing by $\sqrt{d_k}$ keeps the *spread* near one.",
        body="Scores:\n\n$$\\frac{QK^\\top}{\\sqrt{d_k}}$$\n\n```python\nprint(1)\n```\n",
        date=dt.date(2026, 2, 1),
    )
    run = SnippetRunFactory(snippet_check=SnippetCheckFactory(note=note))
    run.started_at = timezone.make_aware(dt.datetime(2026, 2, 3, 9, 0))
    run.save()
    CorrectionFactory(
        note=note,
        date=dt.date(2026, 3, 4),
        what_was_wrong="The note said the divisor was $d_k$.",
        what_changed="It is $\\sqrt{d_k}$.",
    )
    return note


def entry_of(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 200
    minidom.parseString(response.content)  # noqa: S318 - our own feed: well-formed, or raises
    feed = feedparser.parse(response.content)
    assert feed.bozo == 0, feed.get("bozo_exception")
    (entry,) = feed.entries
    return entry.content[0].value if "content" in entry else entry.description


@pytest.mark.parametrize("name", FEEDS)
def test_feed_entry_is_valid_html_with_marks_and_corrections(client, note, name):
    html = entry_of(client, name)
    assert html_faults(html) == []
    why = '<p><strong>Why it matters:</strong> Dividing by <span class="math inline"><math'
    assert html.startswith(why)
    assert "<em>spread</em> near one.</p>" in html
    assert (
        "<p><strong>Verified</strong>: every snippet check of this note passed on its latest "
        "run (2026-02-03).</p>"
    ) in html
    assert (
        '<p><strong>Corrected</strong>: a substantive claim was corrected on <time datetime="'
        '2026-03-04">2026-03-04</time>; the dated notes are at the end.</p>'
    ) in html
    assert (
        '<time datetime="2026-03-04">2026-03-04</time> — <strong>What was wrong:</strong>' in html
    )
    assert '<strong>What changed:</strong> It is <span class="math inline"><math' in html


@pytest.mark.parametrize("name", FEEDS)
def test_feed_entry_formulas_carry_their_latex(client, note, name):
    html = entry_of(client, name)
    assert 'alttext="\\frac{QK^\\top}{\\sqrt{d_k}}"' in html
    assert (
        '<annotation encoding="application/x-tex">\\frac{QK^\\top}{\\sqrt{d_k}}</annotation>'
        in (html)
    )
    assert html.count("<math") == html.count("alttext=") == html.count("<annotation") == 4


def test_feed_entry_without_checks_or_corrections_has_no_marks(client):
    NoteFactory(summary="Plain.", body="Just text.")
    html = entry_of(client, "notebook:feed_rss")
    assert html_faults(html) == []
    assert "Verified" not in html and "Corrected" not in html


def test_feed_queries_do_not_grow_with_notes(client, note):
    def queries() -> int:
        client.get(reverse("notebook:feed_rss"))
        with CaptureQueriesContext(connection) as ctx:
            client.get(reverse("notebook:feed_rss"))
        return len(ctx.captured_queries)

    one = queries()
    for i in range(5):
        other = NoteFactory(title=f"More {i}", body=f"$$x_{i}$$")
        SnippetRunFactory(snippet_check=SnippetCheckFactory(note=other))
        CorrectionFactory(note=other)
    assert queries() == one

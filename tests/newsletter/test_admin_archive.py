"""Editors' admin (compose, preview, test, send, watch) and the public archive with its feed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from newsletter.models import Delivery, Issue
from newsletter.services import composing, sending
from tests.courses.factories import ChapterFactory, CourseFactory
from tests.newsletter.factories import IssueFactory, SubscriberFactory, confirmed_subscribers
from tests.notebook.factories import NoteFactory

pytestmark = pytest.mark.django_db


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize(
    "url",
    ["/admin/newsletter/subscriber/", "/admin/newsletter/delivery/", "/admin/newsletter/issue/"],
)
def test_admin_lists_run_constant_queries(editor_client, url):
    sent = IssueFactory(status="sent", finished_at=timezone.now())
    Delivery.objects.create(
        issue=sent, subscriber=SubscriberFactory(), status="failed", last_error="550 no"
    )
    one = _queries(editor_client, url)
    draft = IssueFactory()
    Delivery.objects.bulk_create(
        Delivery(issue=draft, subscriber=s) for s in confirmed_subscribers(50, prefix="b")
    )
    IssueFactory.create_batch(10)
    assert _queries(editor_client, url) == one


def test_admin_subscriber_list_skips_the_full_count(editor_client):
    confirmed_subscribers(3)
    SubscriberFactory(status="pending")
    page = editor_client.get("/admin/newsletter/subscriber/?status__exact=confirmed")
    html = page.content.decode()
    assert "3 results" in html
    assert "4 total" not in html  # show_full_result_count = False: no count(*) of the table


def test_admin_issue_page_shows_progress_and_polls_while_sending(editor_client):
    confirmed_subscribers(4)
    issue = IssueFactory()
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    Delivery.objects.filter(pk=Delivery.objects.first().pk).update(
        status="failed", last_error="550 5.1.1 No such user"
    )
    page = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/change/").content.decode()
    assert '<progress max="4" value="1">25%</progress>' in page
    assert "/static/django_htmx/htmx" in page
    assert f'hx-get="/admin/newsletter/issue/{issue.pk}/progress/" hx-trigger="every 2s"' in page
    fragment = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/progress/").content.decode()
    assert fragment.startswith('<div id="issue-progress"')
    assert '<strong data-count="queued">3</strong> queued' in fragment
    assert "550 5.1.1 No such user" in fragment


def test_admin_progress_fragment_is_for_staff_only(client, learner):
    issue = IssueFactory()
    assert client.get(f"/admin/newsletter/issue/{issue.pk}/progress/").status_code == 302
    client.force_login(learner)
    assert client.get(f"/admin/newsletter/issue/{issue.pk}/progress/").status_code == 302


def test_admin_preview_send_test_and_send_now(editor_client, editor):
    SubscriberFactory.create_batch(3)
    issue = IssueFactory(subject="Preview me")
    preview = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/preview/")
    assert preview.status_code == 200
    assert "Hello," in preview.content.decode()  # no name on the account: a neutral greeting
    assert "'unsafe-inline'" in preview["Content-Security-Policy"]
    text = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/preview/?part=text")
    assert text["Content-Type"] == "text/plain; charset=utf-8"

    response = editor_client.post(f"/admin/newsletter/issue/{issue.pk}/send-test/")
    assert response.status_code == 302
    assert [(m.subject, m.to) for m in mail.outbox] == [("[TEST] Preview me", [editor.email])]
    assert Delivery.objects.count() == 0

    confirm = {"confirm": "send"}
    response = editor_client.post(f"/admin/newsletter/issue/{issue.pk}/send-now/", confirm)
    assert response.status_code == 302
    issue.refresh_from_db()
    assert issue.status == "sending"
    assert Delivery.objects.filter(issue=issue).count() == 3
    # A second click sends nothing twice.
    editor_client.post(f"/admin/newsletter/issue/{issue.pk}/send-now/", confirm)
    assert Delivery.objects.filter(issue=issue).count() == 3


def test_admin_send_now_get_only_asks(editor_client):
    issue = IssueFactory()
    assert editor_client.get(f"/admin/newsletter/issue/{issue.pk}/send-now/").status_code == 200
    issue.refresh_from_db()
    assert issue.status == "draft"
    assert editor_client.put(f"/admin/newsletter/issue/{issue.pk}/send-now/").status_code == 405


def test_admin_draft_next_issue_lists_new_chapters_and_notes(editor_client):
    last = IssueFactory(status="sent", finished_at=timezone.now() - timedelta(days=3))
    assert last.pk
    response = editor_client.post("/admin/newsletter/issue/draft-next/")
    assert response.status_code == 302
    draft = Issue.objects.filter(status="draft").get()
    assert draft.send_at > timezone.now()
    assert draft.send_at.weekday() == 0
    assert draft.body.startswith("What is new on From Scratch since the last letter.")


def test_draft_next_issue_lists_what_was_published_since_the_last_issue(db):
    IssueFactory(status="sent", finished_at=timezone.now() - timedelta(days=2))
    old = ChapterFactory(title="Old chapter")
    type(old).objects.filter(pk=old.pk).update(published_at=timezone.now() - timedelta(days=5))
    new = ChapterFactory(title="Rotary embeddings")
    ChapterFactory(title="Unpublished chapter", published=False)
    ChapterFactory(title="In a hidden course", course=CourseFactory(published=False))
    old_note = NoteFactory(title="Old note")
    type(old_note).objects.filter(pk=old_note.pk).update(
        published_at=timezone.now() - timedelta(days=5)
    )
    note = NoteFactory(title="Why RMSNorm drops the mean")
    NoteFactory(title="Draft note", published=False)

    draft = composing.draft_next_issue()

    site = "http://127.0.0.1:8000"
    assert draft.body == (
        "What is new on From Scratch since the last letter.\n\n"
        "## New chapters\n\n"
        f"- [Rotary embeddings]({site}{new.get_absolute_url()})\n\n"
        "## From the notebook\n\n"
        f"- [Why RMSNorm drops the mean]({site}{note.get_absolute_url()})\n"
    )


def test_admin_retry_failed_requeues(editor_client):
    issue = IssueFactory(status="sent", finished_at=timezone.now())
    Delivery.objects.create(
        issue=issue, subscriber=SubscriberFactory(), status="failed", attempts=5
    )
    Delivery.objects.create(issue=issue, subscriber=SubscriberFactory(), status="sent", attempts=1)
    editor_client.post(f"/admin/newsletter/issue/{issue.pk}/retry/")
    issue.refresh_from_db()
    assert issue.status == "sending"
    assert sorted(issue.deliveries.values_list("status", "attempts")) == [
        ("queued", 0),
        ("sent", 1),
    ]


def test_archive_lists_only_sent_issues_and_feed(client):
    sent = IssueFactory(subject="Sent one", status="sent", finished_at=timezone.now())
    IssueFactory(subject="Still a draft")
    page = client.get("/newsletter/archive/").content.decode()
    assert "Sent one" in page
    assert "Still a draft" not in page
    detail = client.get(f"/newsletter/archive/{sent.pk}/")
    assert detail.status_code == 200
    assert "<math" in detail.content.decode()  # on the web, maths is MathML
    draft = Issue.objects.get(subject="Still a draft")
    assert client.get(f"/newsletter/archive/{draft.pk}/").status_code == 404
    feed = client.get("/newsletter/archive/feed/")
    assert feed["Content-Type"].startswith("application/rss+xml")
    body = feed.content.decode()
    assert "<title>Sent one</title>" in body
    assert "Still a draft" not in body


def test_archive_runs_constant_queries(client):
    IssueFactory(status="sent", finished_at=timezone.now())
    one = _queries(client, "/newsletter/archive/")
    for _ in range(30):
        IssueFactory(status="sent", finished_at=timezone.now())
    assert _queries(client, "/newsletter/archive/") == one

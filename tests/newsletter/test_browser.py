"""A reader subscribes from a chapter page, confirms from the mail, unsubscribes from an issue."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from newsletter.models import Subscriber
from newsletter.services import sending
from tests.newsletter.factories import IssueFactory


@pytest.mark.browser
def test_browser_subscribe_from_chapter_confirm_and_unsubscribe(page, live_server, settings):
    from tests.courses.factories import ChapterFactory

    settings.SITE_URL = live_server.url
    chapter = ChapterFactory(title="Rotary position embeddings", slug="rope")

    page.goto(chapter.get_absolute_url())
    page.fill("#nl-chapter-email", "ada@example.com")
    page.locator("form:has(#nl-chapter-email) button[type=submit]").click()
    page.locator("#nl-chapter-result [data-outcome=sent]").wait_for()
    assert "a message is on its way" in page.inner_text("#nl-chapter-result")
    assert page.url.endswith(chapter.get_absolute_url())  # htmx: no navigation
    subscriber = Subscriber.objects.get()
    assert (subscriber.status, subscriber.source) == ("pending", "chapter:rope")

    [confirmation] = mail.outbox
    link = re.search(r"http://\S+/newsletter/confirm/\S+/", confirmation.body)[0]
    page.goto(link)
    page.get_by_role("button", name="Confirm my subscription").click()
    page.locator("[data-outcome=confirmed]").wait_for()
    subscriber.refresh_from_db()
    assert subscriber.status == "confirmed"

    issue = IssueFactory(subject="This week: RoPE")
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    ids = list(issue.deliveries.values_list("id", flat=True))
    sending.send_chunk(
        issue_id=issue.pk, first_id=ids[0], last_id=ids[-1], owner="browser", queue_chunk=None
    )
    letter = mail.outbox[-1]
    assert letter.subject == "This week: RoPE"
    html = letter.alternatives[0][0]
    unsubscribe = re.search(r'href="(http://[^"]+/newsletter/unsubscribe/[^"]+/)"', html)[1]
    assert f"<{unsubscribe}>" in letter.extra_headers["List-Unsubscribe"]

    page.goto(unsubscribe)
    page.get_by_role("button", name="Unsubscribe").click()
    page.locator("[data-outcome=unsubscribed]").wait_for()
    subscriber.refresh_from_db()
    assert subscriber.status == "unsubscribed"
    page.watch.assert_clean()


@pytest.mark.browser
def test_browser_rate_limit_message_shows_in_the_box(page, live_server, settings):
    settings.NEWSLETTER_SIGNUP_LIMIT_PER_ADDRESS = 1
    page.watch.allowed_statuses.add(429)
    page.goto("/")
    for _ in range(2):
        page.fill("#nl-home-email", "ada@example.com")
        page.locator("form:has(#nl-home-email) button[type=submit]").click()
        page.wait_for_load_state("networkidle")
    page.locator("#nl-home-result [data-outcome=limited]").wait_for()
    assert "Too many sign-up attempts" in page.inner_text("#nl-home-result")
    # Chromium logs every 4xx response in the console; that one is expected, nothing else.
    assert page.watch.console_errors == [
        "Failed to load resource: the server responded with a status of 429 (Too Many Requests)"
    ]
    assert page.watch.failed_requests == []
    assert page.watch.foreign_requests == []

"""A reader subscribes from a chapter page, confirms from the mail, unsubscribes from an issue."""

from __future__ import annotations

import re

import pytest
from django.conf import settings as django_settings
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


WIDE_BODY = (
    "A display equation wider than a phone:\n\n"
    "$$\\theta_t = \\theta_{t-1} - \\frac{\\alpha \\sqrt{1-\\beta_2^t}}{1-\\beta_1^t}"
    " \\cdot \\frac{\\hat m_t}{\\sqrt{\\hat v_t} + \\epsilon} + \\lambda \\theta_{t-1}"
    " + \\sum_{i=1}^{n} w_i x_i$$\n\n"
    "Inline $\\sqrt{\\hat v_t} + \\epsilon$ in a sentence, and a long link: "
    "[https://example.org/a/really/long/path/that/does/not/break/by/itself/at/all/ever]"
    "(https://example.org/a/really/long/path/that/does/not/break/by/itself/at/all/ever).\n\n"
    "```python\ntheta = theta - alpha * m_hat / (np.sqrt(v_hat) + eps)  # a long code line\n```\n"
)


def _html_with_cid_resolved(message) -> str:
    """The HTML part as a mail client shows it: cid: sources replaced by the related parts."""
    import base64

    markup = message.get_body(preferencelist=("html",)).get_content()
    for part in message.walk():
        if part.get_content_type() == "image/png":
            cid = part["Content-ID"].strip("<>")
            data = base64.b64encode(part.get_content()).decode()
            markup = markup.replace(f"cid:{cid}", f"data:image/png;base64,{data}")
    assert "cid:" not in markup
    return markup


@pytest.mark.browser
@pytest.mark.parametrize("body", ["demo", WIDE_BODY], ids=["demo-letter", "wide-equation"])
def test_browser_mail_html_reads_at_360px_with_equations_loaded(
    chromium, smtp_settings, smtp_server, body, db
):
    from newsletter.demo import CONTENT_DIR
    from platform.frontmatter import read_markdown
    from tests.newsletter.factories import SubscriberFactory

    if body == "demo":
        body = read_markdown(CONTENT_DIR / "first-letter.md")[1]
    SubscriberFactory(email="phone@example.com", name="Ada")
    issue = IssueFactory(subject="On a phone", body=body)
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    sending.send_chunk(issue_id=issue.pk, first_id=0, last_id=10**9, owner="b", queue_chunk=None)
    [received] = smtp_server.recorder.received

    context = chromium.new_context(viewport={"width": 360, "height": 740})
    try:
        pg = context.new_page()
        pg.set_content(_html_with_cid_resolved(received.message()), wait_until="load")
        images = pg.eval_on_selector_all(
            "img",
            "els => els.map(e => ({alt: e.alt, ok: e.complete && e.naturalWidth > 0,"
            " right: e.getBoundingClientRect().right}))",
        )
        assert images and all(image["ok"] for image in images), images
        assert all(image["right"] <= 360 for image in images), images
        overflow = pg.evaluate("document.documentElement.scrollWidth")
        assert overflow <= 360
        if body == WIDE_BODY:
            # The wide equation is scaled down to the column, not cut off.
            shown = pg.eval_on_selector(".math-display-img", "e => e.getBoundingClientRect()")
            assert shown["width"] < int(pg.get_attribute(".math-display-img", "width"))
        out = django_settings.VAR_DIR / "screenshots"
        out.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(out / f"mail-360-{len(images)}-images.png"), full_page=True)
    finally:
        context.close()


@pytest.mark.browser
def test_browser_send_now_confirms_then_status_follows_without_reload(
    page, live_server, editor, password
):
    from newsletter.models import Issue
    from tests.newsletter.factories import confirmed_subscribers

    confirmed_subscribers(2)
    issue = IssueFactory(subject="Watch me")
    page.goto("/admin/login/")
    page.fill("#id_username", editor.email)
    page.fill("#id_password", password)
    # Each navigation completes (load) before the next, so no request is cut off midway.
    with page.expect_navigation(wait_until="load"):
        page.click("input[type=submit]")
    page.goto(f"/admin/newsletter/issue/{issue.pk}/change/")
    with page.expect_navigation(wait_until="load"):
        page.get_by_role("button", name="Send now… (asks to confirm)").click()
    assert page.inner_text("[data-fact=recipients]") == "2 confirmed subscribers"
    with page.expect_navigation(wait_until="load"):
        page.get_by_role("button", name="Confirm: send to 2 confirmed subscribers").click()
    page.locator("#issue-progress").wait_for()
    assert page.inner_text("#issue-status-value") == "sending"
    assert page.inner_text("#issue-progress h2") == "Delivery in progress"

    sending.send_chunk(issue_id=issue.pk, first_id=0, last_id=10**9, owner="b", queue_chunk=None)
    assert Issue.objects.get(pk=issue.pk).status == "sent"
    # No reload: the polled fragment swaps the box and, out of band, the form's fields.
    page.locator("#issue-status-value:text-is('sent')").wait_for(timeout=10000)
    assert page.inner_text("#issue-progress h2") == "Delivery finished"
    assert page.inner_text("[data-count=sent]") == "2"
    assert page.inner_text("#issue-finished-value") != "—"
    # Chromium's own /favicon.ico request (the admin has no icon) logs a 404 that is no
    # response of the page's; every request the page made is checked by bad_responses.
    errors = [e for e in page.watch.console_errors if "404 (Not Found)" not in e]
    assert errors == []
    assert page.watch.bad_responses == []
    assert page.watch.failed_requests == []
    assert page.watch.foreign_requests == []

"""What a subscriber receives: typeset equations, clean plain text, links that work; and the
admin an editor sends it from (confirmation, live progress, plurals, charset, greeting)."""

from __future__ import annotations

import re
import struct
from email.message import EmailMessage

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client

from newsletter import emails, mail_rendering
from newsletter.mail_rendering import equation_text, render_body
from newsletter.models import Delivery, Issue, Subscriber
from newsletter.services import sending
from platform.frontmatter import read_markdown
from tests.factories import UserFactory
from tests.newsletter.factories import IssueFactory, SubscriberFactory, confirmed_subscribers

pytestmark = pytest.mark.django_db

SMALL_BODY = """\
A **bold** claim with a [relative link](/courses/attention/) and
[an absolute one](https://arxiv.org/abs/1706.03762).

## The update

$$\\theta_t = \\theta_{t-1} - \\frac{\\eta}{\\sqrt{\\hat v_t} + \\epsilon}$$

Inline: $QK^\\top$ and *emphasis*.

```python
x = 1
y = 2
```

1. first
2. second
"""

SMALL_TEXT = """\
A bold claim with a relative link
(https://fs.example/courses/attention/) and an absolute one
(https://arxiv.org/abs/1706.03762).

The update
----------

    θ_t = θ_(t−1) − η/(√(v̂_t) + ε)

Inline: QKᵀ and emphasis.

    x = 1
    y = 2

1. first
2. second
"""


@pytest.fixture(autouse=True)
def _fresh_renders(settings):
    settings.SITE_URL = "https://fs.example"
    cache.clear()
    emails._prepare.cache_clear()
    yield
    emails._prepare.cache_clear()


def _demo_body() -> str:
    from newsletter.demo import CONTENT_DIR

    _meta, body = read_markdown(CONTENT_DIR / "first-letter.md")
    return body


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def _imgs(markup: str) -> list[dict[str, str]]:
    return [dict(re.findall(r'(\w+)="([^"]*)"', tag)) for tag in re.findall(r"<img [^>]*>", markup)]


# --- the text part ---------------------------------------------------------------------------


def test_text_part_of_a_small_body_is_plain_text_exactly():
    assert render_body(SMALL_BODY).text == SMALL_TEXT


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"\theta_{t-1}", "θ_(t−1)"),
        (r"\sqrt{\hat v_t} + \epsilon", "√(v̂_t) + ε"),
        (r"QK^\top", "QKᵀ"),
        (r"\frac{QK^\top}{\sqrt{d_k}}", "QKᵀ/√(d_k)"),
        (r"\frac{a+b}{2}", "(a + b)/2"),
        (r"\sum_{i=1}^n x_i^2", "∑_(i=1)^n x_i²"),
        (r"x_i y_i", "x_i y_i"),
        (r"-x + y", "−x + y"),
        (r"\mathbf{W} x", "Wx"),
        (r"\softmax(z)", "softmax(z)"),  # unknown command: its name, no backslash
        (r"\frac{1}{", r"\frac{1}{"),  # unparseable: the source itself
    ],
)
def test_equation_text_is_unambiguous(latex, text):
    assert equation_text(latex) == text


# --- the HTML part ---------------------------------------------------------------------------


def test_demo_letter_equations_are_images_with_size_and_alt():
    rendered = render_body(_demo_body())
    images = _imgs(rendered.html)
    assert [image["alt"] for image in images] == ["softmax(QKᵀ/√(d_k))V", "QKᵀ", "√(d_k)"]
    assert [image["class"] for image in images] == [
        "math-display-img",
        "math-inline",
        "math-inline",
    ]
    by_cid = {f"cid:{eq.cid}": eq for eq in rendered.equations}
    for image in images:
        equation = by_cid[image["src"]]
        # Drawn at 2×, shown at 1×: the PNG is twice the width/height attributes (± rounding).
        width, height = _png_size(equation.png)
        assert abs(width - 2 * int(image["width"])) <= 2
        assert abs(height - 2 * int(image["height"])) <= 2
    inline = [image for image in images if image["class"] == "math-inline"]
    assert all(re.fullmatch(r"vertical-align:-\d+px", image["style"]) for image in inline)
    assert "<math" not in rendered.html and "<pre" not in rendered.html
    assert "$" not in rendered.html and "$" not in rendered.text


@pytest.mark.parametrize(
    "body",
    [
        "Unknown $\\foo{x}$ command.",
        "Broken $\\frac{1}{$ braces.",
        "Tags $\\text{<script>alert(1)</script>}$ in text.",
        "Link $\\href{javascript:alert(1)}{x}$ inside.",
        "Huge $" + "x+" * 3000 + "x$ formula.",
        "$$\\begin{matrix}a & b \\\\ c\\end{matrix}$$",
        "Lone $ dollar and $$",
        "Marker-like text FSMAILEQ99Q and FSMAILEQ0N0Q with $x$.",
        "",
    ],
)
def test_hostile_or_odd_latex_never_crashes_and_reads(body):
    rendered = render_body(body)
    assert "<script" not in rendered.html
    assert "javascript:" not in rendered.html
    assert "javascript:" not in rendered.text
    for image in _imgs(rendered.html):
        assert image["alt"]
        assert image["src"].startswith("cid:eq-")
    if "\\foo" in body:
        assert _imgs(rendered.html)[0]["alt"] == "foo x"
        assert "foo x" in rendered.text
    if "\\frac{1}{" in body:
        assert '<code class="math-fallback">\\frac{1}{</code>' in rendered.html
    if "<script>" in body:
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered.html


def test_paragraphs_stay_whole_around_equations():
    html = render_body("$x$ starts it.\n\n$$y$$\n\nEnds with $z$").html
    assert re.sub(r"<img [^>]*>", "IMG", html) == (
        '<p>IMG starts it.</p>\n<p class="math-display">IMG</p>\n<p>Ends with IMG</p>\n'
    )


def test_links_and_images_are_absolute_in_both_parts():
    body = "See [a](/courses/x/), [b](notebook/y), [c](https://e.org/) and ![fig](/static/f.png)."
    rendered = render_body(body)
    hrefs = re.findall(r'(?:href|src)="([^"]*)"', rendered.html)
    assert hrefs == [
        "https://fs.example/courses/x/",
        "https://fs.example/notebook/y",
        "https://e.org/",
        "https://fs.example/static/f.png",
    ]
    assert rendered.text == (
        "See a (https://fs.example/courses/x/), b\n"
        "(https://fs.example/notebook/y), c (https://e.org/) and [fig:\n"
        "https://fs.example/static/f.png].\n"
    )


# --- the message -----------------------------------------------------------------------------


def _parts(message: EmailMessage) -> list[str]:
    return [part.get_content_type() for part in message.walk()]


def test_sent_message_is_alternative_with_related_html_and_cid_images(smtp_settings, smtp_server):
    SubscriberFactory(email="ada@example.com", name="Ada")
    issue = IssueFactory(subject="Attention", body=_demo_body())
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    sending.send_chunk(issue_id=issue.pk, first_id=0, last_id=10**9, owner="t", queue_chunk=None)

    [received] = smtp_server.recorder.received
    message = received.message()
    assert _parts(message) == [
        "multipart/alternative",
        "text/plain",
        "multipart/related",
        "text/html",
        "image/png",
        "image/png",
        "image/png",
    ]
    html_part = message.get_body(preferencelist=("html",))
    assert html_part["Content-Type"] == 'text/html; charset="utf-8"'
    markup = html_part.get_content()
    images = [part for part in message.walk() if part.get_content_type() == "image/png"]
    cids = [part["Content-ID"].strip("<>") for part in images]
    assert [image["src"] for image in _imgs(markup)] == [f"cid:{cid}" for cid in cids]
    for part in images:
        assert part.get_content_disposition() == "inline"
        assert part.get_content()[:4] == b"\x89PNG"
    # CSS is inlined: the layout survives clients that drop <style>.
    assert "<style" not in markup
    assert 'class="letter" style="max-width: 640px;' in markup
    assert "Hello Ada," in markup
    text = message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
    assert "    softmax(QKᵀ/√(d_k))V\n" in text
    assert "The scores QKᵀ compare" in text
    links = re.findall(r'href="([^"]*)"', markup)
    assert links and all(link.startswith("https://fs.example/") for link in links)


def test_each_equation_is_typeset_once_per_issue_not_per_recipient(monkeypatch, settings):
    settings.NEWSLETTER_CHUNK_SIZE = 4
    calls: list[str] = []
    typeset = mail_rendering._typeset

    def counting(latex: str, display: bool):
        calls.append(latex)
        return typeset(latex, display)

    monkeypatch.setattr(mail_rendering, "_typeset", counting)
    confirmed_subscribers(10)
    body = "Twice: $x^2$ and $x^2$, once $\\sqrt{y}$.\n\n$$x^2$$"
    issue = IssueFactory(body=body)
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    ids = list(Delivery.objects.order_by("id").values_list("id", flat=True))
    for first in range(0, 10, 4):  # three chunks, as three tasks would send them
        chunk = ids[first : first + 4]
        sending.send_chunk(
            issue_id=issue.pk, first_id=chunk[0], last_id=chunk[-1], owner="t", queue_chunk=None
        )
    assert len(mail.outbox) == 10
    assert sorted(calls) == ["\\sqrt{y}", "x^2", "x^2"]  # inline x² and display x² differ
    # Another process (the cache is shared) draws nothing again.
    emails._prepare.cache_clear()
    emails.IssueMail(issue)
    assert len(calls) == 3


def test_fast_bytes_carry_the_same_parts_and_images_as_the_ordinary_message():
    import email
    from email import policy

    subscriber = SubscriberFactory(email="zoe@example.com", name="Zoë <&> O'Neil")
    issue_mail = emails.IssueMail(IssueFactory(body=_demo_body()))
    assert issue_mail._parts is not None
    fast = email.message_from_bytes(issue_mail.raw(subscriber), policy=policy.default)
    slow = email.message_from_bytes(
        issue_mail.message(subscriber).message().as_bytes(linesep="\r\n"), policy=policy.default
    )
    assert _parts(fast) == _parts(slow)
    for fast_part, slow_part in zip(fast.walk(), slow.walk(), strict=True):
        if not fast_part.is_multipart():
            assert fast_part.get_content() == slow_part.get_content()


# --- the greeting ----------------------------------------------------------------------------


def test_greeting_uses_the_name_then_the_account_name_then_hello():
    with_name = SubscriberFactory(email="ada@example.com", name="Ada")
    user = UserFactory(email="grace@example.com", first_name="Grace", last_name="Hopper")
    with_account = SubscriberFactory(email="grace@example.com", name="", user=user)
    anonymous = SubscriberFactory(email="reader1@example.com", name="")
    assert [emails.greeting(s) for s in (with_name, with_account, anonymous)] == [
        "Hello Ada,",
        "Hello Grace Hopper,",
        "Hello,",
    ]
    issue_mail = emails.IssueMail(IssueFactory())
    text = issue_mail.message(anonymous).body
    assert "\nHello,\n" in text
    assert "reader1" not in text.split("Unsubscribe")[0]


def _queries_to_send(issue: Issue) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    emails.IssueMail(issue)  # rendered once; the send below only personalises
    with CaptureQueriesContext(connection) as ctx:
        sending.send_chunk(
            issue_id=issue.pk, first_id=0, last_id=10**9, owner="t", queue_chunk=None
        )
    return len(ctx.captured_queries)


def test_sent_greeting_reads_the_account_name_without_a_query_per_message():
    user = UserFactory(email="grace@example.com", first_name="Grace", last_name="Hopper")
    SubscriberFactory(email="grace@example.com", name="", user=user)
    one = _queries_to_send(IssueFactory())
    assert "\nHello Grace Hopper,\n" in mail.outbox[0].body
    for i in range(5):
        SubscriberFactory(name="", user=UserFactory(email=f"u{i}@example.com", first_name="U"))
    six = _queries_to_send(IssueFactory())
    assert six - one == 5  # the mark of each sent row; the names came with the claim's join
    assert sorted(m.body.count("\nHello U,\n") for m in mail.outbox[1:]) == [0] + [1] * 5


# --- the admin -------------------------------------------------------------------------------


def test_send_now_get_shows_the_confirmation_and_sends_nothing(editor_client, settings):
    settings.NEWSLETTER_FROM_EMAIL = "From Scratch <letters@fs.example>"
    confirmed_subscribers(3)
    SubscriberFactory(status=Subscriber.Status.PENDING)
    SubscriberFactory(status=Subscriber.Status.UNSUBSCRIBED)
    issue = IssueFactory(subject="Adam, slowly")

    page = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/send-now/")
    assert page.status_code == 200
    markup = page.content.decode()
    assert '<dd data-fact="subject">Adam, slowly</dd>' in markup
    assert '<dd data-fact="recipients">3 confirmed subscribers</dd>' in markup
    assert '<dd data-fact="from">From Scratch &lt;letters@fs.example&gt;</dd>' in markup
    assert 'name="csrfmiddlewaretoken"' in markup
    assert 'value="Confirm: send to 3 confirmed subscribers"' in markup
    assert f'href="/admin/newsletter/issue/{issue.pk}/change/" class="button cancel-link"' in markup
    issue.refresh_from_db()
    assert issue.status == "draft"
    assert Delivery.objects.count() == 0

    # A POST without the confirmation field only shows the page again.
    assert editor_client.post(f"/admin/newsletter/issue/{issue.pk}/send-now/").status_code == 200
    assert Delivery.objects.count() == 0

    response = editor_client.post(
        f"/admin/newsletter/issue/{issue.pk}/send-now/", {"confirm": "send"}, follow=True
    )
    assert "Sending “Adam, slowly” to 3 confirmed subscribers." in response.content.decode()
    # The count shown is the count frozen.
    assert Delivery.objects.filter(issue=issue).count() == 3


def test_send_now_confirmation_needs_csrf(editor):
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    SubscriberFactory()
    issue = IssueFactory()
    response = client.post(f"/admin/newsletter/issue/{issue.pk}/send-now/", {"confirm": "send"})
    assert response.status_code == 403
    assert Delivery.objects.count() == 0


def test_plurals_say_one_subscriber_and_one_delivery(editor_client):
    SubscriberFactory()
    issue = IssueFactory()
    page = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/send-now/").content.decode()
    assert '<dd data-fact="recipients">1 confirmed subscriber</dd>' in page
    response = editor_client.post(
        f"/admin/newsletter/issue/{issue.pk}/send-now/", {"confirm": "send"}, follow=True
    )
    assert "to 1 confirmed subscriber." in response.content.decode()
    Delivery.objects.update(status="failed", last_error="550 no")
    Issue.objects.filter(pk=issue.pk).update(status="sent")
    fragment = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/progress/").content.decode()
    assert 'value="Retry 1 failed delivery"' in fragment
    assert ">The failed delivery</a>" in fragment
    response = editor_client.post(f"/admin/newsletter/issue/{issue.pk}/retry/", follow=True)
    assert "1 failed delivery queued again." in response.content.decode()


def test_progress_fragment_carries_live_status_and_updates_the_form_out_of_band(editor_client):
    confirmed_subscribers(2)
    issue = IssueFactory()
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    page = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/change/").content.decode()
    assert '<span id="issue-status-value">sending</span>' in page
    assert '<span id="issue-finished-value">—</span>' in page
    assert "Sending: sending" not in page
    assert "<h2>Delivery in progress</h2>" in page
    assert 'hx-swap-oob="true"' not in page  # the page has the real fields

    sending.send_chunk(issue_id=issue.pk, first_id=0, last_id=10**9, owner="t", queue_chunk=None)
    fragment = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/progress/").content.decode()
    assert "<h2>Delivery finished</h2>" in fragment
    assert "Status: <strong>sent</strong> · finished " in fragment
    assert '<strong data-count="sent">2</strong> sent' in fragment
    assert '<span id="issue-status-value" hx-swap-oob="true">sent</span>' in fragment
    assert re.search(r'<span id="issue-finished-value" hx-swap-oob="true">\d', fragment)
    assert "hx-get" not in fragment  # finished: polling stops


def test_text_part_view_is_utf8_plain_text(editor_client, editor):
    issue = IssueFactory(subject="Naïve", body="Café: $\\theta_{t-1}$ — **done**.")
    response = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/preview/?part=text")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = response.content.decode("utf-8")
    assert "Café: θ_(t−1) — done.\n" in text
    html_view = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/preview/")
    assert html_view["Content-Type"] == "text/html; charset=utf-8"
    # The preview shows the pictures a mail client would (data: instead of cid:).
    [image] = _imgs(html_view.content.decode())
    assert image["src"].startswith("data:image/png;base64,")
    assert image["alt"] == "θ_(t−1)"


def test_list_action_send_now_goes_to_the_confirmation(editor_client):
    SubscriberFactory()
    one, two = IssueFactory(), IssueFactory()
    response = editor_client.post(
        "/admin/newsletter/issue/", {"action": "send_now", "_selected_action": [one.pk]}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/admin/newsletter/issue/{one.pk}/send-now/"
    response = editor_client.post(
        "/admin/newsletter/issue/",
        {"action": "send_now", "_selected_action": [one.pk, two.pk]},
        follow=True,
    )
    assert "Select one issue to send" in response.content.decode()
    assert Delivery.objects.count() == 0


# --- SITE_URL follows make run ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["PORT=8201"], {}, "http://127.0.0.1:8201"),
        (["HOST=0.0.0.0", "PORT=9000"], {}, "http://0.0.0.0:9000"),
        (["PORT=8201"], {"SITE_URL": "https://fs.example"}, "https://fs.example"),
    ],
)
def test_make_run_points_mailed_links_at_the_address_it_serves(args, env, expected):
    """`make run PORT=…` hands every process a SITE_URL on that port unless one is set."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parents[2]
    clean = {k: v for k, v in os.environ.items() if k not in ("SITE_URL", "HOST", "PORT")}
    command = [make, "-s", "--no-print-directory", "--eval", "print-url: ; @echo $(SITE_URL)"]
    out = subprocess.run(
        [*command, "print-url", *args],
        cwd=root,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == expected


def test_send_now_of_a_sent_issue_sends_nothing_again(editor_client):
    SubscriberFactory()
    issue = IssueFactory(status=Issue.Status.SENT)
    response = editor_client.get(f"/admin/newsletter/issue/{issue.pk}/send-now/", follow=True)
    assert f"“{issue.subject}” is sent; not sent again." in response.content.decode()
    response = editor_client.post(
        f"/admin/newsletter/issue/{issue.pk}/send-now/", {"confirm": "send"}, follow=True
    )
    assert "not sent again" in response.content.decode()
    assert Delivery.objects.count() == 0


def test_progress_fragment_queries_do_not_grow_with_failures(editor_client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    issue = IssueFactory(status=Issue.Status.SENT)
    url = f"/admin/newsletter/issue/{issue.pk}/progress/"

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert editor_client.get(url).status_code == 200
        return len(ctx.captured_queries)

    Delivery.objects.create(issue=issue, subscriber=SubscriberFactory(), status="failed")
    one = queries()
    Delivery.objects.bulk_create(
        Delivery(issue=issue, subscriber=s, status="failed", last_error="550 no")
        for s in confirmed_subscribers(40, prefix="f")
    )
    assert queries() == one

"""The messages the newsletter sends: issues (personalised) and sign-up confirmations.

An issue is rendered once per chunk (markdown, templates); each recipient's copy is that
rendering with their name and unsubscribe link substituted in, so a chunk of hundreds of
messages costs one template render.
"""

from __future__ import annotations

import html
from functools import lru_cache
from urllib.parse import quote

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.core.mail.message import make_msgid, sanitize_address
from django.core.mail.utils import DNS_NAME
from django.template.loader import render_to_string
from django.urls import reverse

from platform.rendering import markdown_to_text, render_markdown

from . import tokens

NAME_MARK = "%%FS-NL-NAME-3e9f%%"
UNSUBSCRIBE_MARK = "%%FS-NL-UNSUB-3e9f%%"
NAME_HTML_MARK = "%%FS-NL-NAME-HTML-3e9f%%"
UNSUBSCRIBE_HTML_MARK = "%%FS-NL-UNSUB-HTML-3e9f%%"
TO_MARK = "fs-nl-to-3e9f@recipient.invalid"
MSGID_MARK = "<fs-nl-msgid-3e9f@recipient.invalid>"


def absolute(path: str) -> str:
    return settings.SITE_URL + path


def unsubscribe_url(subscriber) -> str:
    return absolute(_unsubscribe_path().replace("TOKEN", tokens.unsubscribe_token(subscriber)))


@lru_cache(maxsize=1)
def _unsubscribe_path() -> str:
    """The path with a placeholder, reversed once per process (reverse() costs per message)."""
    return reverse("newsletter:unsubscribe", args=["TOKEN"])


def confirmation_url(subscriber) -> str:
    return absolute(reverse("newsletter:confirm", args=[tokens.confirmation_token(subscriber)]))


def list_headers(unsubscribe: str) -> dict[str, str]:
    """RFC 2369 / RFC 8058 headers: one-click unsubscribe by POST to the https link."""
    mailto = f"mailto:{settings.NEWSLETTER_UNSUBSCRIBE_MAILTO}?subject={quote('unsubscribe')}"
    return {
        "List-Unsubscribe": f"<{unsubscribe}>, <{mailto}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        "List-Id": settings.NEWSLETTER_LIST_ID,
    }


def email_html_body(markdown_source: str) -> str:
    """The issue body for the HTML part: maths as readable text (mail clients drop MathML)."""
    return render_markdown(markdown_to_text(markdown_source))


class _Marker:
    email = TO_MARK
    greeting_name = NAME_MARK


class IssueMail:
    """One issue rendered for mail; ``message()`` personalises a copy for one subscriber.

    ``raw()`` is the fast path for SMTP: the MIME message is serialised once with markers in
    place of the personal parts, and each copy is that byte string with the markers replaced
    (Python's email generator costs ~2 ms a message, more than the SMTP exchange). It is used
    only when the serialised template provably holds every marker intact in 8-bit parts;
    otherwise ``raw()`` builds the message the ordinary way.
    """

    def __init__(self, issue) -> None:
        context = {
            "issue": issue,
            "body_html": email_html_body(issue.body),
            "body_text": markdown_to_text(issue.body),
            "name": NAME_MARK,
            "unsubscribe_url": UNSUBSCRIBE_MARK,
            "archive_url": absolute(reverse("newsletter:issue", args=[issue.pk]))
            if issue.pk
            else absolute(reverse("newsletter:archive")),
            "SITE_NAME": settings.SITE_NAME,
            "SITE_URL": settings.SITE_URL,
        }
        self.subject = issue.subject
        self.html = render_to_string("newsletter/email/issue.html", context)
        self.text = render_to_string("newsletter/email/issue.txt", context)
        self.envelope_from = sanitize_address(settings.NEWSLETTER_FROM_EMAIL, "utf-8")
        self._template = self._byte_template()

    def message(self, subscriber, *, connection=None, unsubscribe: str | None = None, **extra):
        unsubscribe = unsubscribe or unsubscribe_url(subscriber)
        name = subscriber.greeting_name
        name_html = extra.get("name_html", html.escape(name))
        unsubscribe_html = extra.get("unsubscribe_html", html.escape(unsubscribe))
        text = self.text.replace(NAME_MARK, name).replace(UNSUBSCRIBE_MARK, unsubscribe)
        body_html = self.html.replace(NAME_MARK, name_html).replace(
            UNSUBSCRIBE_MARK, unsubscribe_html
        )
        headers = list_headers(unsubscribe)
        if "message_id" in extra:
            headers["Message-ID"] = extra["message_id"]
        msg = EmailMultiAlternatives(
            subject=self.subject,
            body=text,
            from_email=settings.NEWSLETTER_FROM_EMAIL,
            to=[subscriber.email],
            headers=headers,
            connection=connection,
        )
        msg.attach_alternative(body_html, "text/html")
        return msg

    def _byte_template(self) -> bytes | None:
        msg = self.message(
            _Marker(),
            unsubscribe=UNSUBSCRIBE_MARK,
            name_html=NAME_HTML_MARK,
            unsubscribe_html=UNSUBSCRIBE_HTML_MARK,
            message_id=MSGID_MARK,
        )
        raw = msg.message().as_bytes(linesep="\r\n")
        expected = {
            NAME_MARK: self.text.count(NAME_MARK),
            NAME_HTML_MARK: self.html.count(NAME_MARK),
            UNSUBSCRIBE_MARK: self.text.count(UNSUBSCRIBE_MARK) + 1,  # + List-Unsubscribe
            UNSUBSCRIBE_HTML_MARK: self.html.count(UNSUBSCRIBE_MARK),
            TO_MARK: 1,
            MSGID_MARK: 1,
        }
        if b"quoted-printable" in raw or b"base64" in raw:
            return None
        if any(raw.count(mark.encode()) != count for mark, count in expected.items()):
            return None
        # Personal values may be non-ASCII: label the parts 8bit (also right for ASCII).
        return raw.replace(b"Content-Transfer-Encoding: 7bit", b"Content-Transfer-Encoding: 8bit")

    def raw(self, subscriber) -> bytes:
        """The personalised message as bytes for SMTP DATA."""
        if self._template is None:
            return self.message(subscriber).message().as_bytes(linesep="\r\n")
        unsubscribe = unsubscribe_url(subscriber)
        name = subscriber.greeting_name
        replacements = (
            (TO_MARK, sanitize_address(subscriber.email, "utf-8")),
            (MSGID_MARK, make_msgid(domain=DNS_NAME)),
            (UNSUBSCRIBE_HTML_MARK, html.escape(unsubscribe)),
            (UNSUBSCRIBE_MARK, unsubscribe),
            (NAME_HTML_MARK, html.escape(name)),
            (NAME_MARK, name),
        )
        raw = self._template
        for mark, value in replacements:
            raw = raw.replace(mark.encode(), value.encode("utf-8"))
        return raw


def confirmation_message(subscriber, *, connection=None):
    """The double opt-in mail; a confirmed subscriber gets a 'you are already subscribed' note
    instead, so the sign-up form answers the same for known and unknown addresses."""
    already = subscriber.status == subscriber.Status.CONFIRMED
    context = {
        "subscriber": subscriber,
        "already": already,
        "confirm_url": None if already else confirmation_url(subscriber),
        "unsubscribe_url": unsubscribe_url(subscriber) if already else None,
        "max_age_days": max(1, settings.NEWSLETTER_CONFIRM_MAX_AGE // 86400),
        "SITE_NAME": settings.SITE_NAME,
        "SITE_URL": settings.SITE_URL,
    }
    subject = (
        f"You are already subscribed to {settings.SITE_NAME}"
        if already
        else f"Confirm your subscription to {settings.SITE_NAME}"
    )
    msg = EmailMultiAlternatives(
        subject=subject,
        body=render_to_string("newsletter/email/confirm.txt", context),
        from_email=settings.NEWSLETTER_FROM_EMAIL,
        to=[subscriber.email],
        connection=connection,
    )
    msg.attach_alternative(render_to_string("newsletter/email/confirm.html", context), "text/html")
    return msg

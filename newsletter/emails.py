"""The messages the newsletter sends: issues (personalised) and sign-up confirmations.

An issue is rendered once per chunk (markdown, templates); each recipient's copy is that
rendering with their name and unsubscribe link substituted in, so a chunk of hundreds of
messages costs one template render.
"""

from __future__ import annotations

import html
from urllib.parse import quote

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse

from platform.rendering import markdown_to_text, render_markdown

from . import tokens

NAME_MARK = "%%FS-NL-NAME-3e9f%%"
UNSUBSCRIBE_MARK = "%%FS-NL-UNSUB-3e9f%%"


def absolute(path: str) -> str:
    return settings.SITE_URL + path


def unsubscribe_url(subscriber) -> str:
    return absolute(reverse("newsletter:unsubscribe", args=[tokens.unsubscribe_token(subscriber)]))


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


class IssueMail:
    """One issue rendered for mail; ``message()`` personalises a copy for one subscriber."""

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

    def message(self, subscriber, *, connection=None, unsubscribe: str | None = None):
        unsubscribe = unsubscribe or unsubscribe_url(subscriber)
        name = subscriber.greeting_name
        text = self.text.replace(NAME_MARK, name).replace(UNSUBSCRIBE_MARK, unsubscribe)
        body_html = self.html.replace(NAME_MARK, html.escape(name)).replace(
            UNSUBSCRIBE_MARK, html.escape(unsubscribe)
        )
        msg = EmailMultiAlternatives(
            subject=self.subject,
            body=text,
            from_email=settings.NEWSLETTER_FROM_EMAIL,
            to=[subscriber.email],
            headers=list_headers(unsubscribe),
            connection=connection,
        )
        msg.attach_alternative(body_html, "text/html")
        return msg


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

"""The messages the newsletter sends: issues (personalised) and sign-up confirmations.

An issue is rendered once per process (markdown, equation pictures, templates, CSS inlining,
MIME serialisation — see :func:`_prepare`); each recipient's copy is that rendering with their
greeting, address, Message-ID and unsubscribe link substituted in, so sending costs a byte join
per message, not a render.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from email.mime.image import MIMEImage
from functools import lru_cache
from urllib.parse import quote

import css_inline
from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.core.mail.message import SafeMIMEMultipart, make_msgid, sanitize_address
from django.core.mail.utils import DNS_NAME
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe

from . import tokens
from .mail_rendering import Equation, render_body

GREETING_MARK = "%%FS-NL-GREETING-3e9f%%"
UNSUBSCRIBE_MARK = "%%FS-NL-UNSUB-3e9f%%"
GREETING_HTML_MARK = "%%FS-NL-GREETING-HTML-3e9f%%"
UNSUBSCRIBE_HTML_MARK = "%%FS-NL-UNSUB-HTML-3e9f%%"
TO_MARK = "fs-nl-to-3e9f@recipient.invalid"
MSGID_MARK = "<fs-nl-msgid-3e9f@recipient.invalid>"
# SMTP's line limit is 998 octets; longer lines would force quoted-printable on the HTML part.
MAX_LINE = 900


def absolute(path: str) -> str:
    return settings.SITE_URL + path


def unsubscribe_url(subscriber) -> str:
    return absolute(_unsubscribe_path().replace("TOKEN", tokens.unsubscribe_token(subscriber)))


@lru_cache(maxsize=1)
def _unsubscribe_path() -> str:
    """The path with a placeholder, reversed once per process (reverse() costs per message)."""
    return reverse("newsletter:unsubscribe", args=["TOKEN"])


def warm_up() -> None:
    """Load the URL resolver, the math font and the typesetter (see newsletter/apps.py)."""
    from .mail_rendering import render_equation

    _unsubscribe_path()
    reverse("newsletter:archive")
    render_equation("x", display=False)


def confirmation_url(subscriber) -> str:
    return absolute(reverse("newsletter:confirm", args=[tokens.confirmation_token(subscriber)]))


def greeting(subscriber) -> str:
    """ "Hello Ada," with the name they gave (or their account's), else a neutral "Hello,"."""
    name = subscriber.greeting_name
    return f"Hello {name}," if name else "Hello,"


def list_headers(unsubscribe: str) -> dict[str, str]:
    """RFC 2369 / RFC 8058 headers: one-click unsubscribe by POST to the https link."""
    mailto = f"mailto:{settings.NEWSLETTER_UNSUBSCRIBE_MAILTO}?subject={quote('unsubscribe')}"
    return {
        "List-Unsubscribe": f"<{unsubscribe}>, <{mailto}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        "List-Id": settings.NEWSLETTER_LIST_ID,
    }


class IssueMessage(EmailMultiAlternatives):
    """Text and HTML alternatives, the HTML part in a ``multipart/related`` with its equation
    pictures as inline ``cid:`` parts::

        multipart/alternative
        ├── text/plain
        └── multipart/related
            ├── text/html
            └── image/png …  (Content-ID, Content-Disposition: inline)
    """

    def __init__(self, *args, equations: tuple[Equation, ...] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.equations = equations

    def _create_alternatives(self, msg):
        msg = super()._create_alternatives(msg)  # type: ignore[misc]  # not in the stubs
        if not self.equations or not msg.is_multipart():
            return msg
        html_part = msg.get_payload()[-1]
        related = SafeMIMEMultipart(_subtype="related", encoding=self.encoding)
        related.attach(html_part)
        for equation in self.equations:
            image = MIMEImage(equation.png or b"", "png")
            image["Content-ID"] = f"<{equation.cid}>"
            image.add_header("Content-Disposition", "inline", filename=equation.filename)
            related.attach(image)
        msg.get_payload()[-1] = related
        return msg


class _Marker:
    email = TO_MARK
    greeting_name = ""


@dataclass(frozen=True)
class _Prepared:
    subject: str
    html: str
    text: str
    equations: tuple[Equation, ...]


def _short_lines(markup: str) -> str:
    """Break HTML lines longer than MAX_LINE at a space outside <pre> (a space and a line
    break are the same to HTML there), so the part stays 8-bit instead of quoted-printable."""
    out: list[str] = []
    in_pre = False
    for line in markup.split("\n"):
        opened, closed = line.count("<pre"), line.count("</pre>")
        while not in_pre and len(line.encode()) > MAX_LINE and " " in line[1:MAX_LINE]:
            cut = line.rindex(" ", 1, MAX_LINE)
            out.append(line[:cut])
            line = line[cut + 1 :]
        out.append(line)
        in_pre = (in_pre or opened > closed) and not (closed > opened)
    return "\n".join(out)


_INLINER = css_inline.CSSInliner(keep_at_rules=True, load_remote_stylesheets=False)


@lru_cache(maxsize=8)
def _prepare(
    issue_pk: int | None, subject: str, body: str, site_url: str, site_name: str
) -> _Prepared:
    """Everything about an issue that is the same for every reader, rendered once per process
    (the arguments are its cache key: an edit or another SITE_URL renders afresh)."""
    rendered = render_body(body)
    archive = reverse("newsletter:issue", args=[issue_pk]) if issue_pk else None
    context = {
        "issue": {"subject": subject},
        "body_html": mark_safe(rendered.html),  # noqa: S308 - sanitised by render_body
        "body_text": rendered.text,
        "greeting": GREETING_MARK,
        "unsubscribe_url": UNSUBSCRIBE_MARK,
        "archive_url": absolute(archive or reverse("newsletter:archive")),
        "SITE_NAME": site_name,
        "SITE_URL": site_url,
    }
    markup = _INLINER.inline(render_to_string("newsletter/email/issue.html", context))
    text = render_to_string("newsletter/email/issue.txt", context)
    return _Prepared(
        subject=subject, html=_short_lines(markup), text=text, equations=rendered.equations
    )


class IssueMail:
    """One issue rendered for mail; ``message()`` personalises a copy for one subscriber.

    ``raw()`` is the fast path for SMTP: the MIME message is serialised once with markers in
    place of the personal parts, and each copy is that byte string with the markers replaced
    (Python's email generator costs ~2 ms a message, more than the SMTP exchange). It is used
    only when the serialised template provably holds every marker intact in 8-bit text parts;
    otherwise ``raw()`` builds the message the ordinary way.
    """

    def __init__(self, issue) -> None:
        prepared = _prepare(
            issue.pk, issue.subject, issue.body, settings.SITE_URL, settings.SITE_NAME
        )
        self.subject = prepared.subject
        self.html = prepared.html
        self.text = prepared.text
        self.equations = prepared.equations
        self.envelope_from = sanitize_address(settings.NEWSLETTER_FROM_EMAIL, "utf-8")
        self._parts = _byte_template(prepared, self)

    def message(self, subscriber, *, connection=None, unsubscribe: str | None = None, **extra):
        unsubscribe = unsubscribe or unsubscribe_url(subscriber)
        hello = extra.get("greeting", greeting(subscriber))
        hello_html = extra.get("greeting_html", html.escape(hello))
        unsubscribe_html = extra.get("unsubscribe_html", html.escape(unsubscribe))
        text = self.text.replace(GREETING_MARK, hello).replace(UNSUBSCRIBE_MARK, unsubscribe)
        body_html = self.html.replace(GREETING_MARK, hello_html).replace(
            UNSUBSCRIBE_MARK, unsubscribe_html
        )
        headers = list_headers(unsubscribe)
        if "message_id" in extra:
            headers["Message-ID"] = extra["message_id"]
        msg = IssueMessage(
            subject=self.subject,
            body=text,
            from_email=settings.NEWSLETTER_FROM_EMAIL,
            to=[subscriber.email],
            headers=headers,
            connection=connection,
            equations=self.equations,
        )
        msg.attach_alternative(body_html, "text/html")
        return msg

    def raw(self, subscriber, *, address: str | None = None) -> bytes:
        """The personalised message as bytes for SMTP DATA (``address``: the subscriber's
        address already passed through ``sanitize_address``, if the caller has it)."""
        if self._parts is None:
            return self.message(subscriber).message().as_bytes(linesep="\r\n")
        unsubscribe = unsubscribe_url(subscriber)
        hello = greeting(subscriber)
        values = {
            TO_MARK: address or sanitize_address(subscriber.email, "utf-8"),
            MSGID_MARK: make_msgid(domain=DNS_NAME),
            UNSUBSCRIBE_HTML_MARK: html.escape(unsubscribe),
            UNSUBSCRIBE_MARK: unsubscribe,
            GREETING_HTML_MARK: html.escape(hello),
            GREETING_MARK: hello,
        }
        encoded = {mark.encode(): value.encode("utf-8") for mark, value in values.items()}
        parts = self._parts
        return b"".join(
            [encoded.get(part, part) if i % 2 else part for i, part in enumerate(parts)]
        )


_MARKS = (
    TO_MARK, MSGID_MARK, UNSUBSCRIBE_HTML_MARK, UNSUBSCRIBE_MARK, GREETING_HTML_MARK, GREETING_MARK
)  # fmt: skip
_MARK_SPLIT = re.compile(b"(" + b"|".join(re.escape(m.encode()) for m in _MARKS) + b")")


def _byte_template(prepared: _Prepared, mail: IssueMail) -> list[bytes] | None:
    """The serialised message split at its markers (odd items are markers), or None when the
    markers did not survive serialisation intact (an encoded text part)."""
    msg = mail.message(
        _Marker(),
        unsubscribe=UNSUBSCRIBE_MARK,
        greeting=GREETING_MARK,
        greeting_html=GREETING_HTML_MARK,
        unsubscribe_html=UNSUBSCRIBE_HTML_MARK,
        message_id=MSGID_MARK,
    )
    raw = msg.message().as_bytes(linesep="\r\n")
    expected = {
        GREETING_MARK: prepared.text.count(GREETING_MARK),
        GREETING_HTML_MARK: prepared.html.count(GREETING_MARK),
        UNSUBSCRIBE_MARK: prepared.text.count(UNSUBSCRIBE_MARK) + 1,  # + List-Unsubscribe
        UNSUBSCRIBE_HTML_MARK: prepared.html.count(UNSUBSCRIBE_MARK),
        TO_MARK: 1,
        MSGID_MARK: 1,
    }
    # Only the pictures may be base64; the text parts must be plain 7/8-bit for the markers.
    if b"quoted-printable" in raw or raw.count(b"Content-Transfer-Encoding: base64") != len(
        prepared.equations
    ):
        return None
    if any(raw.count(mark.encode()) != count for mark, count in expected.items()):
        return None
    # Personal values may be non-ASCII: label the parts 8bit (also right for ASCII).
    raw = raw.replace(b"Content-Transfer-Encoding: 7bit", b"Content-Transfer-Encoding: 8bit")
    return _MARK_SPLIT.split(raw)


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

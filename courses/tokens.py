"""Signed tokens in review reminder emails: one-click turn-off without logging in.

A plain Signer (links in old reminders keep working) over the user's id and a digest of their
address, with its own salt, so no other token of the site passes as one.
"""

from __future__ import annotations

import hashlib
import hmac

from django.contrib.auth import get_user_model
from django.core import signing

REMINDER_SALT = "courses.review-reminders-off.v1"


class BadToken(Exception):
    """Tampered or foreign; the message is shown on the page."""


def _digest(email: str) -> str:
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()[:16]


def reminder_token(user) -> str:
    return signing.Signer(salt=REMINDER_SALT).sign(f"{user.pk}.{_digest(user.email)}")


def user_from_reminder_token(token: str):
    try:
        payload = signing.Signer(salt=REMINDER_SALT).unsign(token)
    except signing.BadSignature as exc:
        raise BadToken("This link is not valid.") from exc
    pk, _, digest = payload.partition(".")
    user = get_user_model().objects.filter(pk=int(pk)).first() if pk.isdigit() else None
    if user is None or not hmac.compare_digest(_digest(user.email), digest):
        raise BadToken("This link does not match any account.")
    return user

"""Signed tokens in newsletter links. Each kind has its own salt, so one never passes as another.

* Confirmation: TimestampSigner, expires after settings.NEWSLETTER_CONFIRM_MAX_AGE.
* Unsubscribe: a plain Signer (links in old issues keep working); it proves the holder received
  mail at that address, which is all one-click unsubscribe (RFC 8058) asks for.
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.core import signing

from .models import Subscriber

CONFIRM_SALT = "newsletter.confirm.v1"
UNSUBSCRIBE_SALT = "newsletter.unsubscribe.v1"


class BadToken(Exception):
    """Tampered, foreign or expired; the message says which for the page."""


def confirmation_token(subscriber: Subscriber) -> str:
    return signing.TimestampSigner(salt=CONFIRM_SALT).sign(_payload(subscriber))


def unsubscribe_token(subscriber: Subscriber) -> str:
    return signing.Signer(salt=UNSUBSCRIBE_SALT).sign(_payload(subscriber))


def _payload(subscriber: Subscriber) -> str:
    # A digest of the address is part of the payload: a token stops working if the row's
    # address changes, and URLs stay short and free of the address's own characters.
    return f"{subscriber.pk}.{_digest(subscriber.email)}"


def _digest(email: str) -> str:
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()[:16]


def _subscriber_for(payload: str) -> Subscriber:
    pk, _, digest = payload.partition(".")
    if not pk.isdigit():
        raise BadToken("This link is not valid.")
    subscriber = Subscriber.objects.filter(pk=int(pk)).first()
    if subscriber is None or not hmac.compare_digest(_digest(subscriber.email), digest):
        raise BadToken("This link does not match any subscription.")
    return subscriber


def subscriber_from_confirmation(token: str):
    try:
        payload = signing.TimestampSigner(salt=CONFIRM_SALT).unsign(
            token, max_age=settings.NEWSLETTER_CONFIRM_MAX_AGE
        )
    except signing.SignatureExpired as exc:
        raise BadToken("This confirmation link has expired.") from exc
    except signing.BadSignature as exc:
        raise BadToken("This link is not valid.") from exc
    return _subscriber_for(payload)


def subscriber_from_unsubscribe(token: str):
    try:
        payload = signing.Signer(salt=UNSUBSCRIBE_SALT).unsign(token)
    except signing.BadSignature as exc:
        raise BadToken("This link is not valid.") from exc
    return _subscriber_for(payload)

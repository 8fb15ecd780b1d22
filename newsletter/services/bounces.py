"""Bounces, complaints and unsubscribes reported after a send, by an ESP or by DSN mail.

Both sources end in :func:`record_report`: a webhook event (anymail's normalised tracking
event, ``newsletter/receivers.py``) or one recipient of an RFC 3464 delivery status
notification (``manage.py process_bounces``). The rules are the same for both:

* a hard bounce, an ESP rejection or a spam complaint suppresses the subscriber at once
  (status *bounced* or *complained*): no later send includes them, and only a new double
  opt-in confirmation brings them back;
* a soft bounce (a temporary failure) adds one to ``Subscriber.soft_bounces``; at
  ``NEWSLETTER_SOFT_BOUNCE_LIMIT`` the address is suppressed as *bounced*;
* an unsubscribe reported by the ESP unsubscribes them.

Every report carries a key (the ESP's event id, or the DSN's Message-ID and recipient); a
report whose key was seen before changes nothing, so replays and re-read mailboxes count once.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from ..models import BounceEvent, Delivery, Subscriber

log = logging.getLogger(__name__)

Kind = BounceEvent.Kind

# An enhanced status code (RFC 3463) or a basic reply code at the start: "4.2.2", "452 …".
_ENHANCED = re.compile(r"(?<![\d.])([245])\.\d{1,3}\.\d{1,3}(?![\d.])")
_BASIC = re.compile(r"^\s*([245])\d\d\b")


def status_class(text: str | None) -> str | None:
    """'2', '4' or '5' from an SMTP answer or DSN Status field; None if it carries no code."""
    if not text:
        return None
    match = _ENHANCED.search(text) or _BASIC.search(text)
    return match.group(1) if match else None


def record_report(
    *,
    key: str,
    kind: str,
    recipient: str,
    description: str = "",
    event: str = "",
    message_id: str = "",
    occurred_at: datetime | None = None,
) -> str:
    """Apply one report; returns what happened, for logs and the command's summary:
    "suppressed", "counted", "unsubscribed", "already suppressed", "duplicate" or "unknown".

    Side effects: a BounceEvent row (the key, so it counts once); the Delivery it concerns
    (by ``message_id`` = the ESP's id stored at send, else the latest sent delivery to the
    recipient) keeps ``event``/``event_at``/``event_description``; the Subscriber's status or
    soft-bounce count changes as the module docstring says.
    """
    occurred_at = occurred_at or timezone.now()
    recipient = recipient.strip()
    with transaction.atomic():
        delivery = _delivery_for(message_id, recipient)
        if delivery is not None:
            subscriber = Subscriber.objects.select_for_update().get(pk=delivery.subscriber_id)
        else:
            subscriber = (
                Subscriber.objects.select_for_update().for_email(recipient).first()
                if recipient
                else None
            )
        try:
            with transaction.atomic():
                BounceEvent.objects.create(
                    key=key[:255],
                    kind=kind,
                    recipient=(recipient or (subscriber.email if subscriber else ""))[:254],
                    subscriber=subscriber,
                    delivery=delivery,
                    description=description[:2000],
                    occurred_at=occurred_at,
                )
        except IntegrityError:
            return "duplicate"
        if delivery is not None:
            Delivery.objects.filter(pk=delivery.pk).update(
                event=(event or kind)[:16],
                event_at=occurred_at,
                event_description=description[:2000],
            )
        if subscriber is None:
            log.info("%s report for %s: no such subscriber", kind, recipient)
            return "unknown"
        outcome = _apply(subscriber, kind, description)
    log.info("%s report for %s: %s", kind, subscriber.email, outcome)
    return outcome


def _delivery_for(message_id: str, recipient: str) -> Delivery | None:
    deliveries = Delivery.objects.select_related(None).only("id", "subscriber_id")
    if message_id:
        found = deliveries.filter(esp_message_id=message_id)
        if recipient:
            by_address = found.filter(subscriber__in=Subscriber.objects.for_email(recipient))
            if by_address.exists():
                found = by_address
        row = found.order_by("-id").first()
        if row is not None:
            return row
    if not recipient:
        return None
    return (
        deliveries.filter(
            subscriber__in=Subscriber.objects.for_email(recipient),
            status=Delivery.Status.SENT,
        )
        .order_by("-sent_at", "-id")
        .first()
    )


def _apply(subscriber: Subscriber, kind: str, description: str) -> str:
    if subscriber.is_suppressed:
        return "already suppressed"
    if kind == Kind.UNSUBSCRIBE:
        subscriber.unsubscribe()
        return "unsubscribed"
    if kind == Kind.COMPLAINT:
        subscriber.suppress(Subscriber.Status.COMPLAINED, f"complaint: {description}")
        return "suppressed"
    if kind == Kind.HARD:
        subscriber.suppress(Subscriber.Status.BOUNCED, f"hard bounce: {description}")
        return "suppressed"
    Subscriber.objects.filter(pk=subscriber.pk).update(soft_bounces=F("soft_bounces") + 1)
    subscriber.refresh_from_db(fields=["soft_bounces"])
    limit = settings.NEWSLETTER_SOFT_BOUNCE_LIMIT
    if subscriber.soft_bounces >= limit:
        subscriber.suppress(
            Subscriber.Status.BOUNCED,
            f"{subscriber.soft_bounces} soft bounces; last: {description}",
        )
        return "suppressed"
    return "counted"


# --- anymail ---------------------------------------------------------------------------------

# Provider bounce types that are temporary although anymail reports them as "bounced".
_SOFT_ESP_TYPES = {"SoftBounce", "Transient", "DnsError"}  # Postmark's Type field


def classify_anymail(event) -> str | None:
    """The Kind of an anymail AnymailTrackingEvent, or None for events that change nothing
    (queued, sent, delivered, opened, clicked, …)."""
    event_type = event.event_type
    if event_type == "complained":
        return Kind.COMPLAINT
    if event_type == "unsubscribed":
        return Kind.UNSUBSCRIBE
    if event_type == "deferred":
        return Kind.SOFT
    if event_type == "rejected":
        return Kind.HARD
    if event_type == "bounced":
        return Kind.SOFT if _temporary(event) else Kind.HARD
    return None


def _temporary(event) -> bool:
    esp_event = event.esp_event if isinstance(event.esp_event, dict) else {}
    if esp_event.get("Type") in _SOFT_ESP_TYPES:
        return True
    # Mailgun: event-data.severity; SendGrid: "type": "blocked" is a temporary bounce.
    data = esp_event.get("event-data", esp_event)
    if isinstance(data, dict) and (
        data.get("severity") == "temporary" or data.get("type") == "blocked"
    ):
        return True
    return status_class(event.mta_response) == "4"


def record_anymail_event(*, event, esp_name: str) -> str | None:
    """Apply one anymail tracking event (see :func:`record_report`); None if it is not a
    bounce, complaint or unsubscribe."""
    kind = classify_anymail(event)
    if kind is None or not event.recipient:
        return None
    description = (
        " — ".join(part for part in (event.description, event.mta_response) if part)
        or event.event_type
    )
    key = event.event_id or f"{event.message_id}:{event.event_type}:{event.timestamp}"
    return record_report(
        key=f"{esp_name.lower()}:{event.recipient.lower()}:{key}",
        kind=kind,
        recipient=event.recipient,
        description=description,
        event=event.event_type,
        message_id=event.message_id or "",
        occurred_at=event.timestamp,
    )

"""Subscribing: sign-up with double opt-in, unsubscribing, and the account page's switch."""

from __future__ import annotations

from allauth.account.models import EmailAddress
from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import emails
from ..models import Subscriber


def request_subscription(*, email: str, source: str = "", name: str = "") -> Subscriber:
    """A sign-up from the public form.

    Side effects: creates a *pending* Subscriber for a new address (an existing row keeps its
    status until its owner confirms); sends exactly one email — the confirmation link, or for a
    confirmed address a note that it is already subscribed — so the answer and the work are the
    same whether or not the address was known.
    """
    email = email.strip()
    subscriber = Subscriber.objects.for_email(email).first()
    if subscriber is None:
        try:
            with transaction.atomic():
                subscriber = Subscriber.objects.create(
                    email=email, name=name[:150], source=source[:100]
                )
        except IntegrityError:  # a concurrent sign-up for the same address won the race
            subscriber = Subscriber.objects.for_email(email).get()
    emails.confirmation_message(subscriber).send()
    return subscriber


def confirm_subscription(*, subscriber: Subscriber) -> None:
    """Double opt-in done. Side effects: status → confirmed; links the row to the account that
    has this address verified, if any (so deleting that account deletes the subscription)."""
    subscriber.confirm()
    if subscriber.user_id is None:
        user_id = _verified_owner(subscriber.email)
        if user_id is not None:
            Subscriber.objects.filter(pk=subscriber.pk).update(user_id=user_id)


def unsubscribe(*, subscriber: Subscriber) -> None:
    """Side effects: status → unsubscribed; queued deliveries to them are skipped at send time."""
    subscriber.unsubscribe()


def resubscribe(*, subscriber: Subscriber) -> bool:
    """Undo an unsubscribe from the link in a received issue (the token proves the mailbox).
    Side effects: status → confirmed. An address suppressed by a bounce or a complaint is left
    alone (returns False): only a new double opt-in brings it back."""
    if subscriber.is_suppressed:
        return False
    subscriber.confirm()
    return True


def verified_address(user) -> str | None:
    """The user's primary address if allauth has it verified, else None."""
    row = (
        EmailAddress.objects.filter(user=user, verified=True)
        .order_by("-primary", "id")
        .values_list("email", flat=True)
        .first()
    )
    return row


def _verified_owner(email: str) -> int | None:
    return (
        EmailAddress.objects.filter(email__iexact=email, verified=True)
        .values_list("user_id", flat=True)
        .first()
    )


def account_subscription(user) -> Subscriber | None:
    """The subscription of a signed-in user: linked to the account, or for their verified
    address."""
    linked = Subscriber.objects.filter(user=user).order_by("-id").first()
    if linked is not None:
        return linked
    address = verified_address(user)
    return Subscriber.objects.for_email(address).first() if address else None


def subscribe_account(*, user) -> Subscriber | None:
    """Subscribe a signed-in learner's verified address without a confirmation mail.

    Side effects: creates or updates the Subscriber for that address as confirmed and linked to
    the user. Returns None (and changes nothing) if the user has no verified address.
    """
    address = verified_address(user)
    if address is None:
        return None
    with transaction.atomic():
        subscriber = Subscriber.objects.select_for_update().for_email(address).first()
        if subscriber is None:
            subscriber = Subscriber(email=address, source="account")
        subscriber.user = user
        subscriber.name = subscriber.name or user.first_name
        subscriber.status = Subscriber.Status.CONFIRMED
        subscriber.confirmed_at = timezone.now()
        subscriber.unsubscribed_at = None
        subscriber.save()
    return subscriber


def unsubscribe_account(*, user) -> Subscriber | None:
    """Side effects: the user's subscription (if any) → unsubscribed."""
    subscriber = account_subscription(user)
    if subscriber is not None:
        subscriber.unsubscribe()
    return subscriber


def link_confirmed_address(*, user, email: str) -> int:
    """allauth confirmed ``email`` for ``user``: tie existing subscriptions for it to the
    account. Side effects: sets Subscriber.user on unlinked rows for that address."""
    return Subscriber.objects.for_email(email).filter(user__isnull=True).update(user=user)

"""Subscribers, issues and the per-recipient deliveries of a send.

A send is a set of Delivery rows frozen in one statement (``services.sending.start_send``);
every later step reads and writes those rows, so the database — not the broker — is the record
of who has been sent what. See services/sending.py for the state machine.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Count, Q
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils import timezone


class SubscriberQuerySet(models.QuerySet):
    def for_email(self, email: str) -> SubscriberQuerySet:
        """Rows for this address in any case; uses the Lower(email) unique index."""
        return self.alias(email_lower=Lower("email")).filter(email_lower=email.strip().lower())

    def confirmed(self) -> SubscriberQuerySet:
        return self.filter(status=Subscriber.Status.CONFIRMED)


class Subscriber(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending confirmation"
        CONFIRMED = "confirmed", "confirmed"
        UNSUBSCRIBED = "unsubscribed", "unsubscribed"
        # Suppressed by a bounce or a spam complaint (services/bounces.py): never mailed again
        # until they confirm through the double opt-in once more.
        BOUNCED = "bounced", "bounced (suppressed)"
        COMPLAINED = "complained", "complained (suppressed)"

    email = models.EmailField(max_length=254)
    name = models.CharField(max_length=150, blank=True, help_text="Used to greet them by name.")
    # Deleting an account deletes the subscriptions tied to it (the account page promises it).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="newsletter_subscriptions",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    source = models.CharField(
        max_length=100, blank=True, help_text="Where they signed up, e.g. footer, chapter:<slug>."
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    unsubscribed_at = models.DateTimeField(null=True, blank=True)
    soft_bounces = models.PositiveIntegerField(
        default=0, help_text="Temporary delivery failures reported since the last confirmation."
    )
    suppressed_at = models.DateTimeField(null=True, blank=True)
    suppressed_reason = models.CharField(max_length=300, blank=True)

    objects = SubscriberQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(Lower("email"), name="newsletter_subscriber_email_ci_unique")
        ]
        indexes = [models.Index(fields=["status", "id"], name="newsletter_sub_status_id")]

    def __str__(self) -> str:
        return self.email

    @property
    def greeting_name(self) -> str:
        """The name to greet them by: the one they gave, else their account's full or first
        name, else "" (the letter then says a neutral "Hello,"; never the address's local
        part). Load ``user`` with the subscriber (select_related) when greeting many."""
        if self.name.strip():
            return self.name.strip()
        if self.user_id is not None and self.user is not None:
            return self.user.get_full_name().strip()
        return ""

    def confirm(self) -> None:
        self.status = self.Status.CONFIRMED
        self.confirmed_at = timezone.now()
        self.unsubscribed_at = None
        self.soft_bounces = 0
        self.suppressed_at = None
        self.suppressed_reason = ""
        self.save(
            update_fields=[
                "status",
                "confirmed_at",
                "unsubscribed_at",
                "soft_bounces",
                "suppressed_at",
                "suppressed_reason",
                "updated_at",
            ]
        )

    @property
    def is_suppressed(self) -> bool:
        return self.status in (self.Status.BOUNCED, self.Status.COMPLAINED)

    def suppress(self, status: str, reason: str) -> None:
        """Stop mailing this address (a hard bounce, a complaint, too many soft bounces)."""
        self.status = status
        self.suppressed_at = timezone.now()
        self.suppressed_reason = reason[:300]
        self.save(update_fields=["status", "suppressed_at", "suppressed_reason", "updated_at"])

    def unsubscribe(self) -> None:
        if self.status == self.Status.UNSUBSCRIBED or self.is_suppressed:
            return
        self.status = self.Status.UNSUBSCRIBED
        self.unsubscribed_at = timezone.now()
        self.save(update_fields=["status", "unsubscribed_at", "updated_at"])


class IssueQuerySet(models.QuerySet):
    def sent(self) -> IssueQuerySet:
        return self.filter(status=Issue.Status.SENT)

    def due(self, now=None) -> IssueQuerySet:
        return self.filter(status=Issue.Status.SCHEDULED, send_at__lte=now or timezone.now())


class Issue(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        SCHEDULED = "scheduled", "scheduled"
        SENDING = "sending", "sending"
        SENT = "sent", "sent"
        FAILED = "failed", "failed"

    subject = models.CharField(max_length=200)
    body = models.TextField(help_text="Markdown with $maths$; it becomes the HTML and text parts.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    send_at = models.DateTimeField(
        null=True, blank=True, help_text="When a scheduled issue goes out (UTC)."
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = IssueQuerySet.as_manager()

    class Meta:
        ordering = ["-send_at", "-id"]
        indexes = [models.Index(fields=["status", "send_at"], name="newsletter_issue_status_at")]

    def __str__(self) -> str:
        return self.subject

    def get_absolute_url(self) -> str:
        return reverse("newsletter:issue", args=[self.pk])

    @property
    def is_editable(self) -> bool:
        return self.status in (self.Status.DRAFT, self.Status.SCHEDULED)

    def delivery_counts(self) -> dict[str, int]:
        """queued / sent / failed / skipped / total in one aggregate query."""
        S = Delivery.Status
        counts = self.deliveries.aggregate(
            total=Count("id"),
            queued=Count("id", filter=Q(status=S.QUEUED)),
            sent=Count("id", filter=Q(status=S.SENT)),
            failed=Count("id", filter=Q(status=S.FAILED)),
            skipped=Count("id", filter=Q(status=S.SKIPPED)),
        )
        counts["done"] = counts["total"] - counts["queued"]
        return counts


class DeliveryQuerySet(models.QuerySet):
    def queued(self) -> DeliveryQuerySet:
        return self.filter(status=Delivery.Status.QUEUED)

    def failed(self) -> DeliveryQuerySet:
        return self.filter(status=Delivery.Status.FAILED)

    def claimable(self, *, now, owner: str = "") -> DeliveryQuerySet:
        """Queued rows nobody holds a live lease on (or that this task itself held) and
        whose retry time, if any, has come."""
        lease_free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
        if owner:
            lease_free |= Q(lease_owner=owner)
        retry_due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
        return self.queued().filter(lease_free, retry_due)


class Delivery(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        SENT = "sent", "sent"
        FAILED = "failed", "failed"
        # The subscriber unsubscribed between the freeze and their turn: nothing was sent.
        SKIPPED = "skipped", "skipped (unsubscribed)"

    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="deliveries")
    subscriber = models.ForeignKey(Subscriber, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    # A chunk task claims its rows for a while (lease) so that no second task sends them too.
    lease_owner = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # Last time the pipeline touched the row; the sweeper re-queues rows untouched too long.
    updated_at = models.DateTimeField(default=timezone.now)
    # The id an email service provider gave the message (anymail), to match its webhooks.
    esp_message_id = models.CharField(max_length=255, blank=True)
    # The last bounce/complaint/unsubscribe reported for this message (services/bounces.py).
    event = models.CharField(max_length=16, blank=True)
    event_at = models.DateTimeField(null=True, blank=True)
    event_description = models.TextField(blank=True)

    objects = DeliveryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["issue", "subscriber"], name="newsletter_delivery_issue_subscriber"
            )
        ]
        indexes = [
            models.Index(fields=["issue", "status", "id"], name="newsletter_del_issue_st"),
            models.Index(
                fields=["esp_message_id"],
                name="newsletter_del_esp_id",
                condition=~Q(esp_message_id=""),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.issue_id} → {self.subscriber_id}: {self.status}"


class BounceEvent(models.Model):
    """One processed report (webhook event or DSN recipient), kept so a report seen twice —
    an ESP retrying its webhook, a mailbox read again — counts once."""

    class Kind(models.TextChoices):
        HARD = "hard", "hard bounce"
        SOFT = "soft", "soft bounce"
        COMPLAINT = "complaint", "complaint"
        UNSUBSCRIBE = "unsubscribe", "unsubscribe"

    key = models.CharField(max_length=255, unique=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    recipient = models.EmailField(max_length=254)
    subscriber = models.ForeignKey(
        Subscriber, null=True, blank=True, on_delete=models.CASCADE, related_name="bounces"
    )
    delivery = models.ForeignKey(
        Delivery, null=True, blank=True, on_delete=models.SET_NULL, related_name="bounces"
    )
    description = models.TextField(blank=True)
    occurred_at = models.DateTimeField(default=timezone.now)
    received_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.recipient}"

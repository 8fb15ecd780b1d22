"""Composing: next week's draft from what was published, and a test send to one address."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from courses.models import Chapter
from notebook.models import Note

from .. import emails
from ..models import Issue, Subscriber


def next_send_time(now: datetime) -> datetime:
    """Next Monday 08:00 UTC strictly after ``now`` (the default weekly slot)."""
    base = now.astimezone(UTC).replace(hour=8, minute=0, second=0, microsecond=0)
    days = (7 - base.weekday()) % 7
    candidate = base + timedelta(days=days)
    return candidate if candidate > now else candidate + timedelta(days=7)


def draft_next_issue(*, now: datetime | None = None) -> Issue:
    """Draft next week's issue from the chapters and notes published since the last sent issue.

    Side effects: creates a *draft* Issue (send time: next Monday 08:00 UTC). Nothing is sent.
    """
    now = now or timezone.now()
    last = Issue.objects.sent().exclude(finished_at=None).order_by("-finished_at").first()
    since = last.finished_at if last else now - timedelta(days=7)
    chapters = list(Chapter.objects.published_since(since).select_related("course"))
    notes = list(Note.objects.published_since(since))
    lines = ["What is new on From Scratch since the last letter.", ""]
    if chapters:
        lines += ["## New chapters", ""]
        lines += [f"- [{c.title}]({emails.absolute(c.get_absolute_url())})" for c in chapters]
        lines.append("")
    if notes:
        lines += ["## From the notebook", ""]
        lines += [f"- [{n.title}]({emails.absolute(n.get_absolute_url())})" for n in notes]
        lines.append("")
    if not chapters and not notes:
        lines += ["Nothing new was published this week; write a few words here.", ""]
    send_at = next_send_time(now)
    return Issue.objects.create(
        subject=f"From Scratch — week of {send_at:%-d %B %Y}",
        body="\n".join(lines),
        status=Issue.Status.DRAFT,
        send_at=send_at,
    )


def send_test(*, issue: Issue, to_email: str) -> None:
    """Send the issue to one address, marked [TEST]. Side effects: one email; no Delivery rows,
    no status change. The unsubscribe link is the real one if the address subscribes."""
    subscriber = Subscriber.objects.for_email(to_email).first() or Subscriber(pk=0, email=to_email)
    msg = emails.IssueMail(issue).message(subscriber)
    msg.subject = f"[TEST] {msg.subject}"
    msg.send()

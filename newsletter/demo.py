"""Demo content for the newsletter (idempotent): the beat schedule and one sent issue."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from .models import Issue
from .services import schedule

WELCOME_SUBJECT = "From Scratch — the first letter: reading attention"

WELCOME_BODY = """\
This is the first letter. Each week it lists the new chapters and notebook notes, and reads
one equation slowly.

## This week's equation

Scaled dot-product attention:

$$\\operatorname{softmax}\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right)V$$

The scores $QK^\\top$ compare every query with every key; dividing by $\\sqrt{d_k}$ keeps
their spread near 1 whatever the width, so the softmax does not saturate.

## Where to start

- The course *Reading ML papers* builds up to this equation one symbol at a time.
- The notebook has short, checked notes on softmax temperature and layer norm.
"""


def load() -> str:
    beat = schedule.ensure_periodic_tasks()
    _issue, created = Issue.objects.get_or_create(
        subject=WELCOME_SUBJECT,
        defaults={
            "body": WELCOME_BODY,
            "status": Issue.Status.SENT,
            "send_at": timezone.now() - timedelta(days=7),
            "started_at": timezone.now() - timedelta(days=7),
            "finished_at": timezone.now() - timedelta(days=7),
        },
    )
    return f"beat schedule: {beat}; archive issue {'created' if created else 'already there'}"

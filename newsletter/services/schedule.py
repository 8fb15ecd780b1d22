"""The beat schedule: the weekly send of due issues and the sweeper.

Written once, here. Migration 0002 calls :func:`create_schedule` with its historical models and
:func:`ensure_periodic_tasks` calls it with the live ones, so this module imports no model: a
migration must not depend on today's model classes.
"""

from __future__ import annotations

from django.apps import apps as live_apps
from django.conf import settings

SEND_DUE_TASK_NAME = "newsletter: send due issues (weekly)"
SWEEP_TASK_NAME = "newsletter: sweep stuck deliveries"

# Monday 08:00 UTC, the slot next_send_time() gives new drafts.
WEEKLY_CRONTAB = {
    "minute": "0",
    "hour": "8",
    "day_of_week": "1",
    "day_of_month": "*",
    "month_of_year": "*",
    "timezone": "UTC",
}


def create_schedule(apps, *, sweep_every: int) -> list[str]:
    """Create the two periodic tasks that are missing, with the models of ``apps`` (the live
    registry or a migration's historical one). Tasks that exist keep an editor's changes.

    Side effects: a CrontabSchedule, an IntervalSchedule (``sweep_every`` seconds) and up to two
    PeriodicTasks. Returns what was created ("weekly send", "sweeper").
    """
    crontab_model = apps.get_model("django_celery_beat", "CrontabSchedule")
    interval_model = apps.get_model("django_celery_beat", "IntervalSchedule")
    task_model = apps.get_model("django_celery_beat", "PeriodicTask")
    crontab, _ = crontab_model.objects.get_or_create(**WEEKLY_CRONTAB)
    interval, _ = interval_model.objects.get_or_create(every=sweep_every, period="seconds")
    created = []
    _, made = task_model.objects.get_or_create(
        name=SEND_DUE_TASK_NAME,
        defaults={"task": "newsletter.tasks.send_due_issues", "crontab": crontab},
    )
    if made:
        created.append("weekly send")
    _, made = task_model.objects.get_or_create(
        name=SWEEP_TASK_NAME,
        defaults={"task": "newsletter.tasks.sweep", "interval": interval},
    )
    if made:
        created.append("sweeper")
    return created


def ensure_periodic_tasks(*, sweep_every: int | None = None) -> str:
    """Create the beat schedule if it is missing; editors' later changes in admin are kept.

    Side effects: those of :func:`create_schedule`, sweeping every ``sweep_every`` seconds
    (default NEWSLETTER_SWEEP_INTERVAL). Returns a line for the demo loader's report.
    """
    created = create_schedule(
        live_apps, sweep_every=sweep_every or settings.NEWSLETTER_SWEEP_INTERVAL
    )
    return ", ".join(created) or "schedule already there"

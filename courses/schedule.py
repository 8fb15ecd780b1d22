"""The beat schedule of the courses app: the daily review reminder.

Written once, here, like newsletter/services/schedule.py: the migration calls
:func:`create_schedule` with its historical models and the demo loader with the live ones, so
this module imports no model.
"""

from __future__ import annotations

from django.apps import apps as live_apps

REMINDER_TASK_NAME = "courses: review reminder emails (daily)"
REMINDER_TASK = "courses.tasks.send_review_reminders"

# Every day at 07:00 UTC, before most learners' day starts in Europe.
DAILY_CRONTAB = {
    "minute": "0",
    "hour": "7",
    "day_of_week": "*",
    "day_of_month": "*",
    "month_of_year": "*",
    "timezone": "UTC",
}


def create_schedule(apps) -> list[str]:
    """Create the daily reminder task if it is missing, with the models of ``apps``; an
    existing one keeps an editor's changes.

    Side effects: a CrontabSchedule and a PeriodicTask. Returns what was created.
    """
    crontab_model = apps.get_model("django_celery_beat", "CrontabSchedule")
    task_model = apps.get_model("django_celery_beat", "PeriodicTask")
    crontab, _ = crontab_model.objects.get_or_create(**DAILY_CRONTAB)
    _, made = task_model.objects.get_or_create(
        name=REMINDER_TASK_NAME, defaults={"task": REMINDER_TASK, "crontab": crontab}
    )
    return ["review reminders"] if made else []


def ensure_periodic_tasks() -> str:
    """Create the reminder schedule if it is missing. Side effects: those of create_schedule."""
    return ", ".join(create_schedule(live_apps)) or "schedule already there"

"""The beat schedule: weekly send of due issues (Monday 08:00 UTC) and the sweeper.

Created only if missing, so an editor's change in admin survives re-running migrations; the
same idempotent step runs in newsletter.demo.load() (services.ensure_periodic_tasks).
"""

from django.conf import settings
from django.db import migrations


def create_schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="0", hour="8", day_of_week="1", day_of_month="*", month_of_year="*", timezone="UTC"
    )
    interval, _ = IntervalSchedule.objects.get_or_create(
        every=settings.NEWSLETTER_SWEEP_INTERVAL, period="seconds"
    )
    PeriodicTask.objects.get_or_create(
        name="newsletter: send due issues (weekly)",
        defaults={"task": "newsletter.tasks.send_due_issues", "crontab": crontab},
    )
    PeriodicTask.objects.get_or_create(
        name="newsletter: sweep stuck deliveries",
        defaults={"task": "newsletter.tasks.sweep", "interval": interval},
    )


class Migration(migrations.Migration):
    dependencies = [
        ("newsletter", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, migrations.RunPython.noop)]

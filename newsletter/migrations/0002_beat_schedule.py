"""The beat schedule: weekly send of due issues (Monday 08:00 UTC) and the sweeper.

Created only if missing, so an editor's change in admin survives re-running migrations. The
definition is shared with newsletter.demo.load() (newsletter/services/schedule.py).
"""

from django.conf import settings
from django.db import migrations

from newsletter.services.schedule import create_schedule


def create(apps, schema_editor):
    create_schedule(apps, sweep_every=settings.NEWSLETTER_SWEEP_INTERVAL)


class Migration(migrations.Migration):
    dependencies = [
        ("newsletter", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create, migrations.RunPython.noop)]

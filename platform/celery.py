"""The Celery application. Start workers with ``python -m celery -A platform worker``."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "platform.settings")

app = Celery("fromscratch")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

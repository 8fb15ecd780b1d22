"""Load every app's demo content. Idempotent: running it again changes nothing."""

from importlib import import_module

from django.core.management.base import BaseCommand
from django.db import transaction

# Notes first: chapters link to them ("You'll see this in").
DEMO_APPS = ["notebook", "courses", "newsletter"]


class Command(BaseCommand):
    help = "Create or update the demo courses, notes and newsletter content (idempotent)."

    def handle(self, *args, **options) -> None:
        for app in DEMO_APPS:
            demo = import_module(f"{app}.demo")
            with transaction.atomic():
                summary = demo.load()
            self.stdout.write(f"demo {app}: {summary or 'loaded'}")

"""Load every app's demo content. Idempotent: running it again changes nothing."""

from importlib import import_module

from django.core.management.base import BaseCommand
from django.db import transaction

from notebook import contentfiles

# The notebook comes first (chapters link to its notes); it is loaded from notebook/content/.
DEMO_APPS = ["courses", "newsletter"]


class Command(BaseCommand):
    help = "Create or update the demo courses, notes and newsletter content (idempotent)."

    def handle(self, *args, **options) -> None:
        self.stdout.write(f"demo notebook: {contentfiles.load(contentfiles.DEFAULT_DIR)}")
        for app in DEMO_APPS:
            try:
                demo = import_module(f"{app}.demo")
            except ModuleNotFoundError as exc:
                if exc.name != f"{app}.demo":
                    raise
                continue
            with transaction.atomic():
                summary = demo.load()
            self.stdout.write(f"demo {app}: {summary or 'loaded'}")

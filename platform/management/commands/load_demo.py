"""Load every app's demo content. Idempotent: running it again changes nothing."""

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction

from courses import schedule as courses_schedule
from newsletter import demo as newsletter_demo


class Command(BaseCommand):
    help = "Create or update the demo courses, notes and newsletter content (idempotent)."

    def handle(self, *args, **options) -> None:
        # The notes, the glossary and the courses, from their content files; listings checked.
        call_command("load_content", stdout=self.stdout)
        with transaction.atomic():
            summary = newsletter_demo.load()
        self.stdout.write(f"demo newsletter: {summary or 'loaded'}")
        self.stdout.write(f"review reminders: {courses_schedule.ensure_periodic_tasks()}")

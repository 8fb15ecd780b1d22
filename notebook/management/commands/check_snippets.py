"""Run snippet checks now, in this process: ``manage.py check_snippets [slug …]``.

Exit status 1 when any check did not pass (failed, error, timed out or not run), for CI.
"""

from django.core.management.base import BaseCommand, CommandError

from notebook import services
from notebook.models import Note, SnippetRun


class Command(BaseCommand):
    help = "Run the snippet checks of every note, or of the notes given by slug."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slugs", nargs="*", help="Only these notes (default: all).")
        parser.add_argument("--time-limit", type=float, default=None, help="Seconds per check.")

    def handle(self, *args, slugs: list[str], time_limit: float | None, **options) -> None:
        notes = Note.objects.filter(checks__isnull=False).distinct().order_by("slug")
        if slugs:
            notes = notes.filter(slug__in=slugs)
            unknown = sorted(set(slugs) - set(notes.values_list("slug", flat=True)))
            if unknown:
                raise CommandError(f"No note with checks has the slug: {', '.join(unknown)}")
        failures = total = 0
        for note in notes:
            for run in services.run_note_checks(note=note, time_limit=time_limit):
                total += 1
                ok = run.status == SnippetRun.Status.PASSED
                failures += not ok
                style = self.style.SUCCESS if ok else self.style.ERROR
                name = run.snippet_check.name
                self.stdout.write(style(f"{run.status:9} {note.slug} / {name} ({run.duration}s)"))
                if not ok:
                    self.stdout.write(f"          {run.detail}")
                    if run.diff:
                        self.stdout.write(run.diff)
        self.stdout.write(f"{total - failures} of {total} checks passed.")
        if failures:
            raise CommandError(f"{failures} check(s) did not pass.", returncode=1)

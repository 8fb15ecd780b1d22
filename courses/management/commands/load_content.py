"""Load content files into the database: courses, the glossary, notebook notes."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from courses import contentfiles, services
from courses.models import CodeListing
from platform.frontmatter import ContentError


class Command(BaseCommand):
    help = (
        "Create or update content from files, idempotently. With no PATH, the demo: the "
        "notebook's notes, then the glossary and courses under courses/content/. A PATH is a "
        "course folder (course.toml), a glossary.toml, a folder of both, or a notebook folder."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, metavar="PATH")
        parser.add_argument(
            "--no-check",
            action="store_true",
            help="Do not run the code listings that have no check result yet.",
        )

    def handle(self, *args, paths: list[Path], no_check: bool, **options) -> None:
        try:
            loaded = contentfiles.load(paths=paths) if paths else contentfiles.load_demo()
        except ContentError as exc:
            raise CommandError(str(exc)) from None
        for summary in loaded.summaries:
            self.stdout.write(summary)
        if no_check:
            return
        unchecked = CodeListing.objects.filter(
            chapter__course__slug__in=loaded.course_slugs, checked_at__isnull=True
        )
        for listing in unchecked:
            services.check_listing(listing=listing)
            self.stdout.write(f"listing {listing.filename}: {listing.check_status}")

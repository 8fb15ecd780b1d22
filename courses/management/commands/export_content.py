"""Write a course (and the glossary) from the database as content files."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from courses import contentfiles
from courses.models import Course


class Command(BaseCommand):
    help = (
        "Write DIR/glossary.toml and DIR/COURSE_SLUG/ (course.toml, a Markdown file per "
        "chapter, listings as files): the format load_content reads."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("course_slug", metavar="COURSE_SLUG")
        parser.add_argument("directory", type=Path, metavar="DIR")

    def handle(self, *args, course_slug: str, directory: Path, **options) -> None:
        try:
            written = contentfiles.export_course(slug=course_slug, directory=directory)
        except Course.DoesNotExist:
            raise CommandError(f"no course with the slug '{course_slug}'") from None
        self.stdout.write(f"wrote {len(written)} files under {directory}")

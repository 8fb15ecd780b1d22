"""Rebuild the two math font subsets and their @font-face rules (see platform/mathfont.py)."""

from django.core.management.base import BaseCommand

from platform import mathfont


class Command(BaseCommand):
    help = "Cut Latin Modern Math into the core and extended woff2 subsets the site serves."

    def handle(self, *args, **options) -> None:
        sizes = mathfont.write()
        for name, size in sizes.items():
            self.stdout.write(f"latinmodern-math-{name}.woff2: {size / 1024:.1f} KB")

"""Admin helpers for the notebook: a line diff of a note's text between two versions."""

import difflib

from django import template

register = template.Library()


@register.filter
def line_diff(old: object, new: object) -> str:
    """A unified diff of two texts, line by line (escaped by the template like any string)."""
    before = str(old or "").splitlines()
    after = str(new or "").splitlines()
    lines = difflib.unified_diff(before, after, "before", "after", n=1, lineterm="")
    return "\n".join(list(lines)[2:]) or "(whitespace only)"


@register.filter
def is_long_text(value: object) -> bool:
    """True for text worth a line diff: several lines, or longer than a line of the table."""
    text = str(value or "")
    return "\n" in text or len(text) > 80

from django import template

from ..models import Note

register = template.Library()


@register.inclusion_tag("notebook/_latest_notes.html")
def latest_notes(count: int = 5) -> dict:
    """The newest published notes with their marks, in a fixed number of queries."""
    return {"notes": list(Note.objects.published().with_marks()[:count])}

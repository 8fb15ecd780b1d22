from django import template
from django.utils.safestring import SafeString

from platform.rendering import highlight_code, render_markdown

from ..models import Note

register = template.Library()


@register.inclusion_tag("notebook/_latest_notes.html")
def latest_notes(count: int = 5) -> dict:
    """The newest published notes with their marks, in a fixed number of queries."""
    return {"notes": list(Note.objects.published().with_marks()[:count])}


@register.filter
def markdown(source: str) -> SafeString:
    return render_markdown(source or "")


@register.simple_tag
def highlight(source: str, language: str = "python") -> SafeString:
    return highlight_code(source or "", language)

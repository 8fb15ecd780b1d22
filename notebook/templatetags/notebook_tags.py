from django import template

register = template.Library()


@register.inclusion_tag("notebook/_latest_notes.html")
def latest_notes(count: int = 5) -> dict:
    return {"notes": []}

from django import template

register = template.Library()


@register.inclusion_tag("courses/_home_courses.html")
def home_courses() -> dict:
    return {"courses": []}

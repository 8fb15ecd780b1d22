"""Template helpers for the courses pages and the home page's course list."""

from __future__ import annotations

import re

from django import template
from django.utils.html import strip_tags
from django.utils.safestring import SafeString, mark_safe

from courses.models import Course
from platform.rendering import latex_to_text, markdown_to_text, render_markdown

register = template.Library()

_ONE_PARAGRAPH = re.compile(r"\A<p>(.*)</p>\s*\Z", re.S)


@register.filter
def inline_markdown(source: str) -> SafeString:
    """Markdown for a line inside other markup (a label, a legend): no wrapping paragraph."""
    html = str(render_markdown(source or ""))
    match = _ONE_PARAGRAPH.match(html)
    if match and "<p>" not in match[1]:
        html = match[1]
    return mark_safe(html)  # noqa: S308 - render_markdown sanitised it; only <p> was removed


_VERDICT = re.compile(r"\A\s*(?:right|correct|yes|wrong|no|not quite)\s*[:.,!—–-]\s*", re.I)


@register.filter
def without_verdict(source: str) -> str:
    """An explanation without a leading "Right:" or "Wrong." of its own, since the page says
    whether the answer was right just before it ("Right. Right: …" otherwise)."""
    text = _VERDICT.sub("", source or "", count=1)
    return text[:1].upper() + text[1:]


@register.filter
def plain_text(source: str) -> str:
    """Markdown as one line of text (meta descriptions)."""
    return " ".join(strip_tags(markdown_to_text(source or "")).split())


@register.filter
def latex_text(latex: str) -> str:
    """A formula as readable text (an accessible name: "√(d_k)", "QKᵀ")."""
    return " ".join(latex_to_text(latex or "").split())


@register.filter
def percent(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole else 0


@register.inclusion_tag("courses/_home_courses.html")
def home_courses() -> dict:
    """Published courses with their number of published chapters (one query)."""
    return {"courses": list(Course.objects.published().with_chapter_counts())}

"""URLs of a chapter's page and of the endpoints its forms post to."""

from __future__ import annotations


def urls(chapter) -> dict[str, str]:
    from django.urls import reverse

    args = [chapter.course.slug, chapter.slug]
    equation = chapter.equations.first()
    return {
        "page": chapter.get_absolute_url(),
        "check": reverse("courses:check", args=args),
        "finish": reverse("courses:finish", args=args),
        "label": reverse("courses:label", args=[*args, equation.pk]) if equation else "",
    }

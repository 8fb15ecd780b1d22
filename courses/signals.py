"""Derived data only: an anonymous session's progress follows its owner into their account."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from .progress import ANON_KEY
from .services import merge_anonymous_progress


@receiver(user_logged_in, dispatch_uid="courses_merge_anonymous_progress")
def merge_on_login(sender, request, user, **kwargs) -> None:
    """Sent by django.contrib.auth.login, which allauth's login and signup both go through."""
    session = getattr(request, "session", None)
    if session is None:
        return
    anon_key = session.pop(ANON_KEY, None)
    if isinstance(anon_key, str) and anon_key:
        merge_anonymous_progress(anon_key=anon_key, user_id=user.pk)

"""Request types for annotations: what middleware adds to ``HttpRequest`` at run time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

if TYPE_CHECKING:
    from platform.models import User


class HtmxHttpRequest(HttpRequest):
    """A request in a view that reads ``request.htmx`` (django-htmx's middleware sets it)."""

    htmx: HtmxDetails


class AuthenticatedHttpRequest(HttpRequest):
    """A request in a view only signed-in users reach (admin views, ``login_required``)."""

    user: User

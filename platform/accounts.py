"""Glue between allauth and the rest of the site."""

from __future__ import annotations

from collections.abc import Callable

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.views import login as allauth_login
from allauth.core import ratelimit
from allauth.core.internal import ratelimit as ratelimit_usage
from django.http import HttpRequest, HttpResponse


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return True


def _too_many_attempts(response: HttpResponse) -> bool:
    form = (getattr(response, "context_data", None) or {}).get("form")
    if form is None or not form.is_bound:
        return False
    return any(
        error.code == "too_many_login_attempts"
        for errors in form.errors.as_data().values()
        for error in errors
    )


def login(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """allauth's login view, answering 429 Too Many Requests once its limit trips.

    allauth re-renders the form with an error (status 200) when the failed-login limit for an
    account or an address is reached; clients and monitors should see a 429.
    """
    response = allauth_login(request, *args, **kwargs)
    if request.method == "POST" and _too_many_attempts(response):
        response.status_code = 429
    return response


def rate_limited_admin_login(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap the admin login with allauth's failed-login limits (same counters as the site)."""

    def admin_login(request: HttpRequest, extra_context=None) -> HttpResponse:
        if request.method != "POST":
            return view(request, extra_context)
        key = "admin:" + request.POST.get("username", "").strip().lower()
        # The internal call returns a usage that can be rolled back after a successful login, as
        # allauth's own login does (allauth is pinned in requirements.txt).
        usage = ratelimit_usage.consume(
            request, app="allauth.account", action="login_failed", key=key
        )
        if not usage:
            return ratelimit.respond_429(request)
        response = view(request, extra_context)
        if request.user.is_authenticated and request.user.is_staff:
            usage.rollback()
        return response

    return admin_login

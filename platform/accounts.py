"""Glue between allauth and the rest of the site.

* **One client-IP rule** (:func:`client_ip`): allauth's, which reads ``TRUSTED_PROXY_COUNT``
  (``ALLAUTH_TRUSTED_PROXY_COUNT``): 0 takes ``REMOTE_ADDR``; N takes the Nth address from the
  right of ``X-Forwarded-For``. Every rate limit keyed on an address uses it.
* **One failed-login counter per account**: allauth counts failed logins under a key built by
  the adapter; here the key names the account (``account:<pk>``) whatever spelling reached it
  (email or username, any case), so the site login, the admin login (:class:`AdminLoginForm`)
  and the delete-account password check all draw on the same five tries.
* **Links in allauth's emails from SITE_URL**, never from the request's Host header; the mails
  greet the learner by the address they typed (the username is generated, never chosen), see
  :func:`user_display` and ``templates/account/email/``.
* **Sign-up errors where they belong** (:class:`SignupForm`): a mismatch of the two passwords
  is shown on the second one even when the first was refused.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from allauth.account.adapter import DefaultAccountAdapter, get_adapter
from allauth.account.forms import LoginForm as AllauthLoginForm
from allauth.account.forms import SignupForm as AllauthSignupForm
from allauth.account.models import EmailAddress
from allauth.account.views import login as allauth_login
from allauth.core.internal.ratelimit import get_ip
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.db.models import Q
from django.http import HttpRequest, HttpResponse

TOO_MANY_LOGIN_ATTEMPTS = "too_many_login_attempts"


def client_ip(request: HttpRequest) -> str:
    """The client's address for rate limits, by allauth's rule (IPv6 cut to its /64)."""
    return get_ip(request)


def login_counter_key(login: str) -> str:
    """The failed-login counter for whatever someone typed as their login.

    A known account is counted by its id, so its email in any case and its username share one
    counter; an unknown login is counted by its lower-cased text (and answers the same way).
    """
    login = login.strip().lower()
    owners = set(
        EmailAddress.objects.filter(email__iexact=login).values_list("user_id", flat=True)[:2]
    )
    if not owners:
        owners = set(
            get_user_model()
            .objects.filter(Q(email__iexact=login) | Q(username__iexact=login))
            .values_list("pk", flat=True)[:2]
        )
    if len(owners) == 1:
        return f"account:{owners.pop()}"
    return f"login:{login}"


def site_url(url: str) -> str:
    """``url`` (absolute or a path) moved onto SITE_URL's scheme and host."""
    base = urlsplit(settings.SITE_URL)
    parts = urlsplit(url)
    return urlunsplit((base.scheme, base.netloc, parts.path, parts.query, parts.fragment))


def user_display(user) -> str:
    """How allauth names a user in pages and mails: the address they typed, not the username
    allauth derived from it."""
    return user.email or user.username


class LoginForm(AllauthLoginForm):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if "remember" in self.fields:
            self.fields["remember"].label = "Keep me logged in on this device"


class SignupForm(AllauthSignupForm):
    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        # allauth compares the two passwords only when the first passed the validators; a
        # learner who typed two different weak passwords should hear about both problems.
        first, second = self.data.get("password1"), self.data.get("password2")
        if first and second and first != second and not self.has_error("password2"):
            self.add_error("password2", "The two passwords differ; type the same one twice.")
        return cleaned


class AccountAdapter(DefaultAccountAdapter):
    def get_client_ip(self, request: HttpRequest) -> str:
        try:
            return super().get_client_ip(request)
        except ImproperlyConfigured:
            # Fewer X-Forwarded-For entries than TRUSTED_PROXY_COUNT: the request did not come
            # through the configured proxies, so there is no trustworthy address.
            raise PermissionDenied("Not through the trusted proxies.") from None

    def _get_login_attempts_cache_key(self, request: HttpRequest, **credentials: Any) -> str:
        # allauth (pinned in requirements.txt) builds its failed-login key here, for login,
        # re-authentication and the reset that clears it; "<site>:<login as typed>" otherwise.
        login = credentials.get("email") or credentials.get("username") or ""
        return login_counter_key(str(login))

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        """Every link allauth puts in a message (``activate_url``, ``password_reset_url``,
        ``signup_url`` …) is built by allauth from the request's host; move it onto SITE_URL."""
        context = {
            name: site_url(value)
            if name.endswith("_url") and isinstance(value, str) and value
            else value
            for name, value in context.items()
        }
        # The greeting names the address the mail goes to; the host is SITE_URL's.
        context.update(
            email=email,
            site_url=settings.SITE_URL,
            site_host=urlsplit(settings.SITE_URL).netloc,
            SITE_NAME=settings.SITE_NAME,
        )
        super().send_mail(template_prefix, email, context)


class AdminLoginForm(AdminAuthenticationForm):
    """The admin login, authenticated through allauth's adapter: the same counters as the site
    login (per account and per address), the same 429 once they trip."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is not None and password:
            self.user_cache = get_adapter(self.request).authenticate(
                self.request, username=username, password=password
            )
            if self.user_cache is None:
                raise self.get_invalid_login_error()
            self.confirm_login_allowed(self.user_cache)
        return self.cleaned_data


def has_too_many_attempts(form) -> bool:
    """True when a bound form was refused because the failed-login limit tripped."""
    if form is None or not form.is_bound:
        return False
    return any(form.has_error(field, TOO_MANY_LOGIN_ATTEMPTS) for field in form.errors)


def too_many_attempts_is_429(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A login view answering 429 Too Many Requests once the failed-login limit trips.

    allauth and the admin re-render the form with the error (status 200); clients and
    monitors should see a 429.
    """

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        form = (getattr(response, "context_data", None) or {}).get("form")
        if request.method == "POST" and has_too_many_attempts(form):
            response.status_code = 429
        return response

    return wrapped


login = too_many_attempts_is_429(allauth_login)

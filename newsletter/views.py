"""Public newsletter pages: sign-up, confirmation, unsubscribe, the account switch, archive."""

from __future__ import annotations

import hashlib
import logging
import smtplib

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from platform.accounts import client_ip
from platform.http import HtmxHttpRequest

from . import tokens
from .forms import SubscribeForm
from .models import Issue, Subscriber
from .services import subscriptions

log = logging.getLogger(__name__)

SIGNUP_SENT = (
    "Thanks! If {email} can receive the letter, a message is on its way to it: open the link "
    "inside to confirm. Nothing arrives? Check the spam folder, or try again in a few minutes."
)
TOO_MANY = (
    "Too many sign-up attempts from here or for this address. Wait an hour and try again — "
    "or, if you already signed up, look for our confirmation email."
)


def _over_limit(key: str, limit: int) -> bool:
    """Count one attempt under ``key`` in the cache; True once more than ``limit`` in the window."""
    window = settings.NEWSLETTER_SIGNUP_WINDOW
    cache.add(key, 0, window)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, window)
        count = 1
    return count > limit


def _rate_limited(request: HttpRequest, email: str | None) -> bool:
    ip = client_ip(request)  # the site's one rule (TRUSTED_PROXY_COUNT), as allauth's limits
    limited = _over_limit(f"nl:signup:ip:{ip}", settings.NEWSLETTER_SIGNUP_LIMIT_PER_IP)
    if email:
        digest = hashlib.sha256(email.strip().lower().encode()).hexdigest()
        limited |= _over_limit(
            f"nl:signup:addr:{digest}", settings.NEWSLETTER_SIGNUP_LIMIT_PER_ADDRESS
        )
    return limited


@require_http_methods(["GET", "POST"])
def subscribe(request: HtmxHttpRequest) -> HttpResponse:
    """The sign-up page; POST (htmx from any box, or a plain form) signs up.

    The answer is the same for new, pending, confirmed and unsubscribed addresses.
    """
    template = "newsletter/subscribe.html#result" if request.htmx else "newsletter/subscribe.html"
    if request.method == "GET":
        return render(request, "newsletter/subscribe.html", {"form": SubscribeForm()})
    form = SubscribeForm(request.POST)
    email = request.POST.get("email", "") if form.is_valid() else None
    if _rate_limited(request, email):
        context = {"form": form, "outcome": "limited", "message": TOO_MANY}
        return render(request, template, context, status=429)
    if not form.is_valid():
        first_error = next(iter(form.errors.values()))[0]
        context = {"form": form, "outcome": "invalid", "message": first_error}
        return render(request, template, context, status=400)
    address = form.cleaned_data["email"]
    try:
        subscriptions.request_subscription(email=address, source=form.cleaned_data["source"])
    except (smtplib.SMTPException, OSError):
        log.exception("newsletter: could not send the confirmation email")
        context = {
            "form": form,
            "outcome": "error",
            "message": "We could not send the confirmation email just now; please try again "
            "in a few minutes.",
        }
        return render(request, template, context, status=503)
    context = {
        "form": SubscribeForm(),
        "outcome": "sent",
        "message": SIGNUP_SENT.format(email=address),
    }
    return render(request, template, context)


@require_http_methods(["GET", "POST"])
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows a button (mail scanners follow links; they do not press buttons); POST
    confirms."""
    try:
        subscriber = tokens.subscriber_from_confirmation(token)
    except tokens.BadToken as exc:
        return render(request, "newsletter/link_invalid.html", {"reason": str(exc)}, status=400)
    confirmed = subscriber.status == Subscriber.Status.CONFIRMED
    if request.method == "POST" and not confirmed:
        subscriptions.confirm_subscription(subscriber=subscriber)
        confirmed = True
        just_confirmed = True
    else:
        just_confirmed = False
    return render(
        request,
        "newsletter/confirm.html",
        {
            "subscriber": subscriber,
            "confirmed": confirmed,
            "just_confirmed": just_confirmed,
            "token": token,
        },
    )


@csrf_exempt  # RFC 8058 one-click: the mail client POSTs without cookies; the token authorises
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """GET asks for confirmation (and offers to re-subscribe); one POST unsubscribes."""
    try:
        subscriber = tokens.subscriber_from_unsubscribe(token)
    except tokens.BadToken as exc:
        return render(request, "newsletter/link_invalid.html", {"reason": str(exc)}, status=400)
    just_unsubscribed = False
    if request.method == "POST":
        subscriptions.unsubscribe(subscriber=subscriber)
        just_unsubscribed = True
    return render(
        request,
        "newsletter/unsubscribe.html",
        {"subscriber": subscriber, "token": token, "just_unsubscribed": just_unsubscribed},
    )


@require_POST
def resubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """Undo an unsubscribe from the page the link in an issue leads to (CSRF-protected)."""
    try:
        subscriber = tokens.subscriber_from_unsubscribe(token)
    except tokens.BadToken as exc:
        return render(request, "newsletter/link_invalid.html", {"reason": str(exc)}, status=400)
    done = subscriptions.resubscribe(subscriber=subscriber)
    return render(
        request,
        "newsletter/unsubscribe.html",
        {"subscriber": subscriber, "token": token, "just_resubscribed": done},
        status=200 if done else 409,
    )


def _account_answer(request: HtmxHttpRequest, message: str) -> HttpResponse:
    if request.htmx:
        return render(
            request, "newsletter/_account.html", {"user": request.user, "nl_message": message}
        )
    messages.success(request, message)
    return redirect("account")


@login_required
@require_POST
def account_subscribe(request: HtmxHttpRequest) -> HttpResponse:
    """Subscribe the learner's verified address at once (no confirmation mail needed)."""
    subscriber = subscriptions.subscribe_account(user=request.user)
    if subscriber is None:
        return _account_answer(request, "Verify your email address first, then subscribe here.")
    return _account_answer(request, f"Subscribed: the letter goes to {subscriber.email}.")


@login_required
@require_POST
def account_unsubscribe(request: HtmxHttpRequest) -> HttpResponse:
    subscriptions.unsubscribe_account(user=request.user)
    return _account_answer(request, "Unsubscribed: no more letters.")


@require_GET
def archive(request: HttpRequest) -> HttpResponse:
    issues = (
        Issue.objects.sent()
        .order_by("-finished_at", "-id")
        .only("id", "subject", "finished_at", "send_at")
    )
    page = Paginator(issues, 20).get_page(request.GET.get("page"))
    return render(request, "newsletter/archive.html", {"page": page})


@require_GET
def issue(request: HttpRequest, pk: int) -> HttpResponse:
    sent = get_object_or_404(Issue.objects.sent(), pk=pk)
    return render(request, "newsletter/issue.html", {"issue": sent})

from __future__ import annotations

import logging

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from . import rendering
from . import search as site_search
from .accounts import has_too_many_attempts
from .forms import DeleteAccountForm
from .http import AuthenticatedHttpRequest

log = logging.getLogger(__name__)


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "platform/home.html")


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _check_cache() -> None:
    cache.set("healthz", "ok", 10)
    if cache.get("healthz") != "ok":
        raise RuntimeError("the cache did not return what was just written")


def _check_broker() -> None:
    from .celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """State of each backing service; 503 naming the ones that did not answer."""
    checks = {"database": _check_database, "cache": _check_cache, "broker": _check_broker}
    state: dict[str, str] = {}
    for name, check in checks.items():
        try:
            check()
        except Exception as exc:  # any failure of a backing service is the answer, not a 500
            log.warning("healthz: %s is down: %s", name, exc)
            state[name] = f"down: {type(exc).__name__}"
        else:
            state[name] = "ok"
    failing = [name for name, value in state.items() if value != "ok"]
    body = {"status": "ok" if not failing else "down", "failing": failing, **state}
    return JsonResponse(body, status=503 if failing else 200)


@login_required
@require_GET
def account(request: AuthenticatedHttpRequest) -> HttpResponse:
    from courses.models import ReviewReminder

    reminder_on = ReviewReminder.objects.filter(user=request.user, enabled=True).exists()
    return render(
        request,
        "platform/account.html",
        {"delete_form": DeleteAccountForm(user=request.user), "review_reminder_on": reminder_on},
    )


@login_required
@require_http_methods(["GET", "POST"])
def delete_account(request: HttpRequest) -> HttpResponse:
    """Delete the signed-in user and everything that hangs off them, after their password.

    The password check shares the account's failed-login counter: 429 once it trips.
    """
    # Bound on every POST, even an empty one: an empty POST must show "required", not a bare 400.
    data = request.POST if request.method == "POST" else None
    form = DeleteAccountForm(data, user=request.user)
    if request.method == "POST" and form.is_valid():
        user = request.user
        logout(request)
        user.delete()
        messages.success(request, "Your account and everything saved with it have been deleted.")
        return redirect("home")
    status = 200
    if request.method == "POST":
        status = 429 if has_too_many_attempts(form) else 400
    return render(request, "platform/account_delete.html", {"delete_form": form}, status=status)


@require_GET
def search(request: HttpRequest) -> HttpResponse:
    """``/search/?q=…`` over published chapters, equations, glossary symbols and notes.

    All kinds, a few hits each, with their counts; ``kind=`` shows one kind, ``page=`` pages
    through it. A query beyond the length cap, an unknown kind or a bad page number is a 400
    that says what to change.
    """
    context: dict = {"query": "", "kind": "", "groups": [], "error": "", "page": 1}
    status = 200
    try:
        query = site_search.clean_query(request.GET.get("q", ""))
        kind = request.GET.get("kind", "")
        if kind and kind not in site_search.KINDS:
            raise site_search.QueryError("Choose chapters, equations, symbols or notes.")
        page_text = request.GET.get("page", "1")
        if not page_text.isdigit() or not 1 <= int(page_text) <= 1000:
            raise site_search.QueryError("The page is a number from 1 to 1000.")
        page = int(page_text)
    except site_search.QueryError as exc:
        context["error"] = str(exc)
        typed = " ".join(request.GET.get("q", "").replace("\x00", " ").split())
        context["query"] = typed[: site_search.MAX_QUERY_LENGTH]
        status = 400
    else:
        per = site_search.PER_PAGE if kind else site_search.PER_GROUP
        groups = (
            site_search.search(
                query,
                kinds=[kind] if kind else tuple(site_search.KINDS),
                limit=per,
                offset=(page - 1) * per if kind else 0,
            )
            if query
            else []
        )
        context.update(
            query=query,
            kind=kind,
            groups=groups,
            page=page,
            first=(page - 1) * per + 1,
            total=sum(group.count for group in groups),
            has_next=bool(kind and groups) and page * per < groups[0].count,
        )
    return render(request, "platform/search.html", context, status=status)


PREVIEW_KINDS = {"markdown", "latex"}
PREVIEW_MAX_LENGTH = 50_000


@require_GET
def preview(request: HttpRequest) -> HttpResponse:
    """Staff only: the rendered fragment of one Markdown or LaTeX field as it is being typed
    (``?kind=markdown|latex`` and the field's own ``name=value``, whatever its name), with the
    problem a save would refuse. Anyone else gets 403; bad input a 400 with a message."""
    if not (request.user.is_authenticated and request.user.is_staff):
        raise PermissionDenied("Only editors can preview.")
    kind = request.GET.get("kind", "")
    values = [request.GET[key] for key in request.GET if key != "kind"]
    if kind not in PREVIEW_KINDS or len(values) != 1:
        return HttpResponseBadRequest("Give kind=markdown or kind=latex and one field value.")
    source = values[0]
    if len(source) > PREVIEW_MAX_LENGTH:
        return HttpResponseBadRequest(
            f"Too long to preview (over {PREVIEW_MAX_LENGTH} characters)."
        )
    if kind == "latex":
        problem = rendering.latex_problem(source) if source.strip() else None
        rendered = "" if problem else rendering.render_math(source, display=True)
    else:
        problem = rendering.markdown_math_problem(source)
        rendered = rendering.render_markdown(source)
    return render(request, "platform/_preview.html", {"problem": problem, "rendered": rendered})

"""The review session at /review/: due cards one at a time, and the reminder email opt-in.

htmx requests get ``review.html#review_card`` (the card and the progress bar); plain requests
get the whole page, so a session works with JavaScript off.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Min, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from platform.http import AuthenticatedHttpRequest, HtmxHttpRequest

from . import review, services, tokens
from .forms import LabelForm, ReminderForm, ReviewAnswerForm
from .learners import Learner, current_learner, seed_of
from .models import EquationPart, QuizAttempt, ReviewCard, ReviewReminder

TEMPLATE = "courses/review.html"
# The review session counts the cards reviewed since it began, for its "n of m" bar; a visit
# after this long begins a new session.
SESSION_KEY = "courses_review_started"
SESSION_LENGTH = timedelta(hours=6)


def review_counts(learner: Learner | None, *, now: datetime) -> dict:
    """Cards due now, by the end of today, within a week; all cards; the next due time. One
    query."""
    end_of_day = timezone.localtime(now).replace(hour=23, minute=59, second=59, microsecond=0)
    due_now = Q(due__lte=now) | Q(tries__gt=0)
    counts = (
        ReviewCard.objects.for_learner(learner)
        .published()
        .aggregate(
            now=Count("id", filter=due_now),
            today=Count("id", filter=due_now | Q(due__lte=end_of_day)),
            week=Count("id", filter=due_now | Q(due__lte=now + timedelta(days=7))),
            total=Count("id"),
            next_due=Min("due", filter=Q(due__gt=now, tries=0)),
        )
    )
    return counts


def _started(request: HttpRequest, learner: Learner | None, now: datetime) -> datetime:
    """When this review session began (kept in the session of a learner who has one)."""
    if learner is None:
        return now
    raw = request.session.get(SESSION_KEY)
    started = None
    if isinstance(raw, str):
        try:
            started = datetime.fromisoformat(raw)
        except ValueError:
            started = None
    if started is None or started.tzinfo is None or now - started > SESSION_LENGTH:
        started = now
        request.session[SESSION_KEY] = now.isoformat()
    return started


def _decorate(card: ReviewCard, learner: Learner | None) -> ReviewCard:
    """Attributes the templates read: shuffled choices, the answer (and, in an open round,
    the wrong choice picked), the label rows."""
    if card.question is not None:
        question = card.question
        choices = list(question.choices.all())
        question.shuffled = review.shuffled(choices, seed=seed_of(learner), key=question.pk)  # type: ignore[attr-defined]
        question.answer = next((c for c in choices if c.is_correct), None)  # type: ignore[attr-defined]
        question.state = "retry" if card.tries else "new"  # type: ignore[attr-defined]
        picked_id = None
        if card.tries:
            picked_id = (
                QuizAttempt.objects.for_learner(learner)
                .filter(question=question)
                .order_by("-created_at", "-id")
                .values_list("choice_id", flat=True)
                .first()
            )
        question.picked = next((c for c in choices if c.pk == picked_id), None)  # type: ignore[attr-defined]
        question.due = None  # type: ignore[attr-defined]
    else:
        assert card.equation is not None
        card.rows = [  # type: ignore[attr-defined]
            {"part": part, "selected": "", "result": None} for part in card.equation.parts.all()
        ]
    return card


def _context(request: HttpRequest, learner: Learner | None, now: datetime) -> dict:
    due = (
        ReviewCard.objects.for_learner(learner)
        .published()
        .due(now)
        .for_session()
        .prefetch_related("question__choices", "equation__parts")
    )
    card = due.first()
    counts = review_counts(learner, now=now)
    started = _started(request, learner, now)
    reviewed = (
        ReviewCard.objects.for_learner(learner)
        .published()
        .filter(last_reviewed_at__gte=started)
        .exclude(Q(due__lte=now) | Q(tries__gt=0))
        .count()
    )
    return {
        "card": _decorate(card, learner) if card else None,
        "position": reviewed + 1,
        "total": reviewed + counts["now"],
        "reviewed": reviewed,
        "counts": counts,
        "roles": EquationPart.Role.choices,
        "signed_in": request.user.is_authenticated,
    }


def _render(request: HtmxHttpRequest, context: dict, *, status: int = 200) -> HttpResponse:
    template = f"{TEMPLATE}#review_card" if request.htmx else TEMPLATE
    return render(request, template, context, status=status)


def _refused(request: HtmxHttpRequest, message: str, *, status: int) -> HttpResponse:
    template = f"{TEMPLATE}#review_refused" if request.htmx else TEMPLATE
    return render(request, template, {"refusal": message, "card": None}, status=status)


@require_GET
def session(request: HtmxHttpRequest) -> HttpResponse:
    """The next due card, with the session's progress bar."""
    learner = current_learner(request)
    return _render(request, _context(request, learner, timezone.now()))


@require_POST
def answer(request: HtmxHttpRequest, card_id: int) -> HttpResponse:
    """One try at a due card: a choice or "Show me" for a question, roles for a label set."""
    learner = current_learner(request)
    now = timezone.now()
    card = (
        ReviewCard.objects.for_learner(learner)
        .published()
        .for_session()
        .prefetch_related("question__choices", "equation__parts")
        .filter(pk=card_id)
        .first()
    )
    if learner is None or card is None:
        return _refused(request, "That card is not in your review.", status=404)
    if not card.is_due(now):
        when = timezone.localtime(card.due)
        return _refused(
            request,
            f"That card is not due yet: it comes back on {when:%-d %B at %H:%M}.",
            status=409,
        )
    context = _context(request, learner, now)
    context["card"] = card = _decorate(card, learner)
    context["answered"] = True
    if card.question is not None:
        question = card.question
        form = ReviewAnswerForm(request.POST, question=question)
        if not form.is_valid():
            context["error"] = next(str(e[0]) for e in form.errors.values() if e)
            context["answered"] = False
            return _render(request, context, status=400)
        result = services.review_question(
            learner=learner, card=card, choice=form.cleaned_data["answer"], now=now
        )
        question.picked = result.choice  # type: ignore[attr-defined]
        question.state = (  # type: ignore[attr-defined]
            "right" if result.correct else "retry" if result.may_retry else "revealed"
        )
        question.due = result.card.due  # type: ignore[attr-defined]
        context["may_retry"] = result.may_retry
    else:
        parts = [row["part"] for row in card.rows]  # type: ignore[attr-defined]
        label_form = LabelForm(request.POST, parts=parts)
        if not label_form.is_valid():
            context["error"] = next(str(e[0]) for e in label_form.errors.values() if e)
            context["answered"] = False
            return _render(request, context, status=400)
        outcome = services.review_labels(
            learner=learner, card=card, roles=label_form.cleaned_data["roles"], now=now
        )
        by_part = {r.part.pk: r for r in outcome.parts}
        for row in card.rows:  # type: ignore[attr-defined]
            row["result"] = by_part.get(row["part"].pk)
            row["selected"] = row["result"].role if row["result"] else ""
        context["label_revealed"] = outcome.revealed
        context["label_score"] = sum(1 for r in outcome.parts if r.correct)
        context["may_retry"] = not outcome.revealed
    card.refresh_from_db(fields=["due"])  # the services saved their own (locked) copy
    context["next_due"] = card.due
    return _render(request, context)


# --- reminder emails --------------------------------------------------------------------------


@login_required
@require_POST
def reminders(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The account page's checkbox: mail me when review cards are due."""
    form = ReminderForm(request.POST)
    form.is_valid()  # a boolean field: anything but a ticked box means off
    enabled = bool(form.cleaned_data.get("enabled"))
    services.set_review_reminder(user=request.user, enabled=enabled)
    messages.success(
        request,
        "You will get an email on days when review cards are due."
        if enabled
        else "Review reminder emails are off.",
    )
    return redirect("account")


@csrf_exempt  # RFC 8058 one-click: the mail client POSTs without cookies; the token authorises
@require_http_methods(["GET", "POST"])
def reminders_off(request: HttpRequest, token: str) -> HttpResponse:
    """GET asks for confirmation; one POST turns the reminders off."""
    try:
        user = tokens.user_from_reminder_token(token)
    except tokens.BadToken as exc:
        return render(request, "courses/reminders_off.html", {"invalid": str(exc)}, status=400)
    done = False
    if request.method == "POST":
        services.set_review_reminder(user=user, enabled=False)
        done = True
    reminder = ReviewReminder.objects.filter(user=user).first()
    return render(
        request,
        "courses/reminders_off.html",
        {"token": token, "done": done, "enabled": bool(reminder and reminder.enabled)},
    )

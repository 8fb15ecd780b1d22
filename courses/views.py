"""Course list, course page, chapter page with its three forms, the learner dashboard.

htmx requests get the matching partial of the same template (``chapter.html#check_section``
…); plain form posts get the whole page, so everything works with JavaScript off.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib import messages
from django.core.cache import cache
from django.db.models import Count, Max, Prefetch, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from platform.http import HtmxHttpRequest
from platform.rendering import render_markdown

from . import explorable, formulas, page_cache, review, services
from .forms import CheckForm, FinishForm, LabelForm
from .learners import Learner, current_learner
from .models import (
    Chapter,
    ChapterProgress,
    CodeListing,
    Course,
    EquationPart,
    LabelAttempt,
    Question,
    QuizAttempt,
    Walkthrough,
    chapter_state,
)
from .page_cache import ARTICLE_TEMPLATE, CHAPTER_TEMPLATE, LearnerState, QuestionState
from .review_views import review_counts
from .widgets.explorer import load_symbols

NEW_QUESTION = QuestionState("new")


def _progress_by_chapter(learner: Learner | None, **filters) -> dict[int, ChapterProgress]:
    rows = ChapterProgress.objects.for_learner(learner).filter(**filters)
    return {p.chapter_id: p for p in rows}


def _mark(chapter: Chapter, progress: ChapterProgress | None) -> str:
    """passed, read, started or not started (``chapter`` annotated with question_count)."""
    return chapter_state(progress, question_count=chapter.question_count)  # type: ignore[attr-defined]


def _published_chapters() -> Prefetch:
    return Prefetch(
        "chapters",
        queryset=Chapter.objects.published().with_question_counts(),
        to_attr="published_chapters",
    )


# --- course list and course page ------------------------------------------------------------


@require_GET
def course_list(request: HttpRequest) -> HttpResponse:
    learner = current_learner(request)
    courses = list(Course.objects.published().with_chapter_counts())
    passed = dict(
        ChapterProgress.objects.for_learner(learner)
        .passed()
        .filter(chapter__in=Chapter.objects.published())
        .values_list("chapter__course_id")
        .annotate(n=Count("id", distinct=True))
    )
    for course in courses:
        course.passed_count = passed.get(course.pk, 0)
    return render(request, "courses/course_list.html", {"courses": courses})


@require_GET
def course_detail(request: HttpRequest, course_slug: str) -> HttpResponse:
    course = get_object_or_404(
        Course.objects.published().prefetch_related(_published_chapters()), slug=course_slug
    )
    chapters = course.published_chapters
    progress = _progress_by_chapter(current_learner(request), chapter__course=course)
    for chapter in chapters:
        chapter.course = course
        chapter.progress_row = progress.get(chapter.pk)
        chapter.mark = _mark(chapter, chapter.progress_row)
    passed = sum(1 for c in chapters if c.mark == "passed")
    next_chapter = next((c for c in chapters if c.mark != "passed"), None)
    return render(
        request,
        "courses/course_detail.html",
        {
            "course": course,
            "chapters": chapters,
            "passed_count": passed,
            "next_chapter": next_chapter,
        },
    )


# --- chapter page ---------------------------------------------------------------------------


def _visible_chapter(request: HttpRequest, course_slug: str, chapter_slug: str) -> Chapter:
    """The chapter for reading: staff also see unpublished ones (preview); 404 otherwise."""
    return get_object_or_404(
        Chapter.objects.select_related("course").visible_to(request.user),
        course__slug=course_slug,
        slug=chapter_slug,
    )


def _published_chapter(course_slug: str, chapter_slug: str) -> Chapter | None:
    """The chapter an answer is for: only published chapters record anything, for anyone."""
    return (
        Chapter.objects.for_page()
        .published()
        .filter(course__slug=course_slug, slug=chapter_slug)
        .first()
    )


def _chapter_context(
    chapter: Chapter,
    state: LearnerState,
    *,
    check_form: CheckForm | None = None,
    check_results: Sequence[services.AnswerResult] = (),
    label_forms: dict[int, LabelForm] | None = None,
    label_results: dict[int, services.LabelResult] | None = None,
    finish_error: str = "",
) -> dict:
    """One context for the page and every fragment of it."""
    course = chapter.course
    equations = list(chapter.equations.all())
    label_forms = label_forms or {}
    label_results = label_results or {}
    for equation in equations:
        equation.chapter = chapter
        form = label_forms.get(equation.pk)
        picked = form.selected() if form else {}
        outcome = label_results.get(equation.pk)
        results = {r.part.pk: r for r in (outcome.parts if outcome else ())}
        equation.label_revealed = outcome is not None and outcome.revealed  # type: ignore[attr-defined]
        equation.rows = [  # type: ignore[attr-defined]
            {"part": part, "selected": picked.get(part.pk, ""), "result": results.get(part.pk)}
            for part in equation.parts.all()
        ]
        equation.label_error = _first_error(form) if form is not None and form.errors else ""  # type: ignore[attr-defined]
        equation.label_score = sum(1 for r in results.values() if r.correct)  # type: ignore[attr-defined]
    questions = list(chapter.questions.all())
    done = state.done
    picked = check_form.selected() if check_form else {}
    answered = {r.question.pk: r for r in check_results}
    for number, question in enumerate(questions, start=1):
        choices = list(question.choices.all())
        by_id = {c.pk: c for c in choices}
        standing = state.questions.get(question.pk, NEW_QUESTION)
        question.number = number  # type: ignore[attr-defined]
        question.done = question.pk in done  # type: ignore[attr-defined]
        question.state = standing.status  # type: ignore[attr-defined]
        question.shuffled = review.shuffled(choices, seed=state.seed, key=question.pk)  # type: ignore[attr-defined]
        question.answer = next((c for c in choices if c.is_correct), None)  # type: ignore[attr-defined]
        question.picked = by_id.get(standing.choice_id or 0)  # type: ignore[attr-defined]
        question.due = standing.due  # type: ignore[attr-defined]
        question.selected = (  # type: ignore[attr-defined]
            standing.choice_id if standing.status == "right" else picked.get(question.pk)
        )
        question.result = answered.get(question.pk)  # type: ignore[attr-defined]
        if question.result and question.result.choice is not None:  # type: ignore[attr-defined]
            question.picked = question.result.choice  # type: ignore[attr-defined]
    siblings = list(Chapter.objects.published().filter(course=course).only("slug", "title"))
    for sibling in siblings:
        sibling.course = course
    previous_chapter, next_chapter = _neighbours(siblings, chapter)
    label_equations = [e for e in equations if e.rows]  # type: ignore[attr-defined]
    chapter_symbols = list(chapter.chapter_symbols.all())
    symbol_patterns = explorable.explore(equations, chapter_symbols, load_symbols())
    return {
        "course": course,
        "chapter": chapter,
        "preview": not chapter.is_visible,
        "reading_minutes": chapter.reading_minutes(),
        "prerequisites": [c for c in chapter.prerequisites.all() if c.is_visible],
        "chapter_symbols": chapter_symbols,
        "idea_html": explorable.mark_html(str(render_markdown(chapter.idea)), symbol_patterns),
        "equations": equations,
        "label_equations": label_equations,
        "labelled_count": sum(1 for e in label_equations if e.pk in state.labelled),
        "listings": list(chapter.listings.all()),
        "related_chapters": [c for c in chapter.related_chapters.all() if c.is_visible],
        "related_notes": chapter.published_related_notes,  # type: ignore[attr-defined]  # set by Chapter.objects.for_page()
        "questions": questions,
        "done_count": sum(1 for q in questions if q.done),  # type: ignore[attr-defined, misc]
        "check_error": _first_error(check_form) if check_form is not None else "",
        "check_answered": bool(check_results),
        "progress": state.progress,
        "signed_in": state.signed_in,
        "finish_error": finish_error,
        "previous_chapter": previous_chapter,
        "next_chapter": next_chapter,
        "roles": EquationPart.Role.choices,
    }


def _neighbours(siblings: list[Chapter], chapter: Chapter) -> tuple[Chapter | None, ...]:
    ids = [c.pk for c in siblings]
    if chapter.pk in ids:
        i = ids.index(chapter.pk)
        return (siblings[i - 1] if i > 0 else None, siblings[i + 1] if i + 1 < len(ids) else None)
    key = (chapter.order, chapter.pk)
    before = [c for c in siblings if (c.order, c.pk) < key]
    after = [c for c in siblings if (c.order, c.pk) > key]
    return (before[-1] if before else None, after[0] if after else None)


def _first_error(form) -> str:
    for errors in form.errors.values():
        if errors:
            return str(errors[0])
    return ""


def _render_chapter(
    request: HtmxHttpRequest, partial: str, context: dict, *, status: int = 200
) -> HttpResponse:
    """The fragment for htmx, else the whole page (forms work with JavaScript off)."""
    if request.htmx:
        # The fragment also carries the table of contents, swapped out of band, so its marks
        # (labelled, answered, finished) follow what the learner just did.
        context = {**context, "toc_oob": True}
        return render(request, f"{ARTICLE_TEMPLATE}#{partial}", context, status=status)
    body = render_to_string(ARTICLE_TEMPLATE, context, request)
    return _page(request, context["chapter"], body, status=status)


def _page(request: HttpRequest, chapter: Chapter, body: str, *, status: int = 200):
    context = {"chapter": chapter, "course": chapter.course, "body": mark_safe(body)}  # noqa: S308
    return render(request, CHAPTER_TEMPLATE, context, status=status)


def _refused(request: HtmxHttpRequest, message: str, *, status: int) -> HttpResponse:
    """A 4xx answer that says what went wrong: a fragment for htmx, a page otherwise."""
    template = "courses/refused.html#message" if request.htmx else "courses/refused.html"
    return render(request, template, {"message": message}, status=status)


def _article(request: HttpRequest, chapter: Chapter, state: LearnerState) -> str:
    """The chapter's article with CSRF placeholders, from the cache when possible."""

    def render_article() -> str:
        full = Chapter.objects.for_page().get(pk=chapter.pk)
        context = {**_chapter_context(full, state), "csrf_token": page_cache.CSRF_PLACEHOLDER}
        return render_to_string(ARTICLE_TEMPLATE, context, request)

    return page_cache.cached(page_cache.article_key(chapter, state), render_article)


def _public_page(request: HttpRequest, course_slug: str, chapter_slug: str) -> HttpResponse | None:
    """The whole page for a reader with no session; None if there is no such published page."""
    version = page_cache.public_version(course_slug, chapter_slug)
    if version is None:
        return None

    def render_page() -> str:
        chapter = Chapter.objects.select_related("course").get(pk=version.pk)
        body = mark_safe(_article(request, chapter, page_cache.NEW_READER))  # noqa: S308 - ours
        context = {
            "chapter": chapter,
            "course": chapter.course,
            "body": body,
            "csrf_token": page_cache.CSRF_PLACEHOLDER,
        }
        return render_to_string(CHAPTER_TEMPLATE, context, request)

    page = page_cache.cached(page_cache.page_key(version), render_page)
    return HttpResponse(page_cache.with_csrf_token(page, request))


@require_GET
def chapter_detail(request: HttpRequest, course_slug: str, chapter_slug: str) -> HttpResponse:
    if page_cache.sessionless(request):
        response = _public_page(request, course_slug, chapter_slug)
        if response is not None:
            return response
    # A signed-in learner's page of a published chapter is cached whole, under a key that moves
    # with the chapter and with their learning_rev (loaded with the user): on a hit, no query.
    key = None
    user = request.user
    if user.is_authenticated and not len(messages.get_messages(request)):
        version = page_cache.public_version(course_slug, chapter_slug)
        if version is not None:
            key = page_cache.learner_page_key(version, user.pk, user.learning_rev)
            hit = cache.get(key)
            now = time.time()
            if (
                hit is not None
                and now < hit.valid_until
                and now - hit.visited_at < services.VISIT_RESOLUTION.total_seconds()
            ):
                return HttpResponse(page_cache.with_csrf_token(hit.html, request))
    chapter = _visible_chapter(request, course_slug, chapter_slug)
    learner = current_learner(request)
    now_dt = timezone.now()
    state = LearnerState.read(request, learner, chapter, now=now_dt)
    if learner is not None and chapter.is_visible:
        services.record_visit(learner=learner, chapter=chapter, progress=state.progress)
    article = _article(request, chapter, state)
    if key is not None:
        html = render_to_string(
            CHAPTER_TEMPLATE,
            {
                "chapter": chapter,
                "course": chapter.course,
                "body": mark_safe(article),  # noqa: S308 - our own cached article
                "csrf_token": page_cache.CSRF_PLACEHOLDER,
            },
            request,
        )
        until = page_cache.learner_page_until(state, now_dt)
        entry = page_cache.LearnerPage(html, until, now_dt.timestamp())
        cache.set(key, entry, max(1, int(until - now_dt.timestamp())))
        return HttpResponse(page_cache.with_csrf_token(html, request))
    return _page(request, chapter, page_cache.with_csrf_token(article, request))


NOT_PUBLISHED = "This chapter is not published, so nothing can be saved for it."
# current_learner(create=True) needs request.session to keep an anonymous learner's key in.
NO_SESSION = "This request has no session, so nothing can be saved for it."


@require_POST
def check_answers(request: HtmxHttpRequest, course_slug: str, chapter_slug: str) -> HttpResponse:
    """Grade one question (``only``) or every answered question of the chapter's check."""
    chapter = _published_chapter(course_slug, chapter_slug)
    if chapter is None:
        return _refused(request, NOT_PUBLISHED, status=404)
    form = CheckForm(request.POST, questions=list(chapter.questions.all()))
    if not form.is_valid():
        state = LearnerState.read(request, current_learner(request), chapter)
        context = _chapter_context(chapter, state, check_form=form)
        return _render_chapter(request, "check_section", context, status=400)
    learner = current_learner(request, create=True)
    if learner is None:
        return _refused(request, NO_SESSION, status=400)
    try:
        results = services.answer_questions(
            learner=learner, chapter=chapter, answers=form.cleaned_data["answers"]
        )
    except services.NotAnswerable as refusal:
        state = LearnerState.read(request, learner, chapter)
        context = _chapter_context(chapter, state, check_form=form)
        context["check_error"] = str(refusal)
        return _render_chapter(request, "check_section", context, status=409)
    state = LearnerState.read(request, learner, chapter)
    context = _chapter_context(chapter, state, check_form=form, check_results=results)
    return _render_chapter(request, "check_section", context)


@require_POST
def label_parts(
    request: HtmxHttpRequest, course_slug: str, chapter_slug: str, equation_id: int
) -> HttpResponse:
    """Check the roles picked for every part of one equation."""
    chapter = _published_chapter(course_slug, chapter_slug)
    if chapter is None:
        return _refused(request, NOT_PUBLISHED, status=404)
    equation = next((e for e in chapter.equations.all() if e.pk == equation_id), None)
    if equation is None:
        return _refused(request, "That equation is not in this chapter.", status=404)
    form = LabelForm(request.POST, parts=list(equation.parts.all()))
    if not form.parts:
        return _refused(request, "This equation has no parts to label.", status=400)
    if not form.is_valid():
        state = LearnerState.read(request, current_learner(request), chapter)
        context = _chapter_context(chapter, state, label_forms={equation.pk: form})
        context["equation"] = next(e for e in context["equations"] if e.pk == equation.pk)
        return _render_chapter(request, "label_form", context, status=400)
    learner = current_learner(request, create=True)
    if learner is None:
        return _refused(request, NO_SESSION, status=400)
    equation.chapter = chapter
    results = services.label_parts(
        learner=learner, equation=equation, roles=form.cleaned_data["roles"]
    )
    context = _chapter_context(
        chapter,
        LearnerState.read(request, learner, chapter),
        label_forms={equation.pk: form},
        label_results={equation.pk: results},
    )
    context["equation"] = next(e for e in context["equations"] if e.pk == equation.pk)
    return _render_chapter(request, "label_form", context)


@require_POST
def finish_chapter(request: HtmxHttpRequest, course_slug: str, chapter_slug: str) -> HttpResponse:
    """Mark the chapter finished, or not finished again."""
    chapter = _published_chapter(course_slug, chapter_slug)
    if chapter is None:
        return _refused(request, NOT_PUBLISHED, status=404)
    form = FinishForm(request.POST)
    if not form.is_valid():
        state = LearnerState.read(request, current_learner(request), chapter)
        context = _chapter_context(chapter, state, finish_error=_first_error(form))
        return _render_chapter(request, "finish_box", context, status=400)
    learner = current_learner(request, create=True)
    if learner is None:
        return _refused(request, NO_SESSION, status=400)
    services.set_finished(learner=learner, chapter=chapter, finished=form.cleaned_data["finished"])
    context = _chapter_context(chapter, LearnerState.read(request, learner, chapter))
    return _render_chapter(request, "finish_box", context)


@require_GET
def download_listing(
    request: HttpRequest, course_slug: str, chapter_slug: str, listing_id: int
) -> HttpResponse:
    listing = get_object_or_404(
        CodeListing.objects.filter(chapter__in=Chapter.objects.visible_to(request.user)),
        pk=listing_id,
        chapter__course__slug=course_slug,
        chapter__slug=chapter_slug,
    )
    response = HttpResponse(listing.source, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{listing.filename}"'
    return response


# --- dashboard ------------------------------------------------------------------------------


@dataclass
class Activity:
    at: datetime
    kind: str
    text: str
    chapter: Chapter
    correct: bool | None = None
    question: Question | None = None


RECENT = 10


def _recent_activity(learner: Learner | None) -> list[Activity]:
    items: list[Activity] = []
    published = Chapter.objects.published()
    for attempt in (
        QuizAttempt.objects.for_learner(learner)
        .filter(question__chapter__in=published)
        .select_related("question__chapter__course")
        .order_by("-created_at", "-id")[:RECENT]
    ):
        items.append(
            Activity(
                attempt.created_at,
                "answer",
                "Answered right"
                if attempt.correct
                else "Asked to see the answer"
                if attempt.revealed
                else "Answered wrong",
                attempt.question.chapter,
                attempt.correct,
                attempt.question,
            )
        )
    groups: dict[tuple[int, datetime], list[LabelAttempt]] = defaultdict(list)
    for attempt in (
        LabelAttempt.objects.for_learner(learner)
        .filter(part__equation__chapter__in=published)
        .select_related("part__equation__chapter__course")
        .order_by("-created_at", "-id")[: RECENT * 8]
    ):
        groups[(attempt.part.equation_id, attempt.created_at)].append(attempt)
    for (_, at), attempts in groups.items():
        equation = attempts[0].part.equation
        right = sum(1 for a in attempts if a.correct)
        items.append(
            Activity(
                at,
                "label",
                f"Labelled {equation.title}: {right} / {len(attempts)} right",
                equation.chapter,
                right == len(attempts),
            )
        )
    for progress in (
        ChapterProgress.objects.for_learner(learner)
        .finished()
        .filter(chapter__in=published)
        .select_related("chapter__course")
        .order_by("-finished_at")[:RECENT]
    ):
        items.append(Activity(progress.finished_at, "finished", "Finished", progress.chapter))
    items.sort(key=lambda a: a.at, reverse=True)
    return items[:RECENT]


# A signed-in learner's dashboard is cached whole for this long at most: "due now" and "due
# today" move with the clock, everything else with their learning_rev or the content.
DASHBOARD_TTL = 60


def _dashboard_key(request: HttpRequest) -> str | None:
    """Where a signed-in learner's dashboard is cached, or None when it must be rendered (not
    signed in, or a message to show): the learner's learning_rev and the courses' content (one
    aggregate query: a chapter edited, added or removed, a course edited). A deploy's new
    templates show within DASHBOARD_TTL."""
    user = request.user
    if not user.is_authenticated or len(messages.get_messages(request)):
        return None
    stamp = Chapter.objects.aggregate(
        chapters=Count("id"), changed=Max("updated_at"), courses=Max("course__updated_at")
    )
    content = f"{stamp['chapters']}:{stamp['changed']}:{stamp['courses']}"
    return f"dashboard:{user.pk}:{user.learning_rev}:{content}"


@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    """Progress per course, where to continue, recent activity, reviews, saved walkthroughs."""
    key = _dashboard_key(request)
    if key is None:
        return render(request, "courses/dashboard.html", _dashboard_context(request))
    html = cache.get(key)
    if html is None:
        context = {**_dashboard_context(request), "csrf_token": page_cache.CSRF_PLACEHOLDER}
        html = render_to_string("courses/dashboard.html", context, request)
        cache.set(key, html, DASHBOARD_TTL)
    return HttpResponse(page_cache.with_csrf_token(html, request))


def _dashboard_context(request: HttpRequest) -> dict:
    learner = current_learner(request)
    now = timezone.now()
    courses = list(Course.objects.published().prefetch_related(_published_chapters()))
    progress = _progress_by_chapter(learner)
    scores = {
        row["question__chapter_id"]: row
        for row in QuizAttempt.objects.for_learner(learner)
        .values("question__chapter_id")
        .annotate(
            right=Count("question_id", filter=Q(correct=True), distinct=True),
            last=Max("created_at"),
        )
        .order_by()
    }
    latest: ChapterProgress | None = None
    for course in courses:
        for chapter in course.published_chapters:
            chapter.course = course
            row = progress.get(chapter.pk)
            chapter.mark = _mark(chapter, row)
            score = scores.get(chapter.pk)
            chapter.right_count = score["right"] if score else 0
            chapter.last_attempt = score["last"] if score else None
            if row is not None and (latest is None or row.updated_at > latest.updated_at):
                latest = row
                latest.chapter = chapter
        course.passed_count = sum(1 for c in course.published_chapters if c.mark == "passed")
        course.next_chapter = next(
            (c for c in course.published_chapters if c.mark != "passed"), None
        )
    continue_chapter = None
    if latest is not None:
        course = latest.chapter.course
        continue_chapter = latest.chapter if latest.finished_at is None else course.next_chapter  # type: ignore[attr-defined]
    walkthroughs: list[Walkthrough] = []
    if request.user.is_authenticated:
        walkthroughs = list(
            Walkthrough.objects.filter(user=request.user).select_related("equation")[:20]
        )
    return {
        "courses": courses,
        "continue_chapter": continue_chapter,
        "activity": _recent_activity(learner),
        "reviews": review_counts(learner, now=now),
        "walkthroughs": walkthroughs,
        "walkthrough_url": reverse("widgets:walkthrough"),
        "now": now,
    }


@require_GET
def typesetting_gallery(request: HttpRequest) -> HttpResponse:
    """Staff only (404 for anyone else): every formula in the content, typeset, beside its
    source, for a reviewer to look over after a change to the renderer."""
    if not (request.user.is_authenticated and request.user.is_staff):
        raise Http404("No such page.")
    entries = formulas.gallery()
    return render(request, "courses/gallery.html", {"entries": entries})

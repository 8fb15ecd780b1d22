"""Public notebook pages: index with filters, topic pages, permalinks, check outputs, search."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.paginator import InvalidPage, Page, Paginator
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from platform.http import HtmxHttpRequest

from .models import Note, NoteQuerySet, SnippetCheck, SnippetRun, Topic

MAX_QUERY_LENGTH = 200
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,80}")


def _page(request: HttpRequest, notes: NoteQuerySet) -> Page:
    """The requested page of ``notes``; a page past the end or not a number is a 404."""
    paginator = Paginator(notes, settings.NOTEBOOK_PAGE_SIZE)
    try:
        return paginator.page(request.GET.get("page") or 1)
    except InvalidPage as exc:
        raise Http404("No such page of notes.") from exc


@require_GET
def index(request: HtmxHttpRequest) -> HttpResponse:
    notes = Note.objects.published()
    kind = request.GET.get("kind", "")
    if kind:
        if kind not in Note.Kind.values:
            raise Http404("No such kind of note.")
        notes = notes.of_kind(kind)
    topic = None
    if slug := request.GET.get("topic", ""):
        if not SLUG.fullmatch(slug):  # e.g. a NUL byte, which PostgreSQL would refuse
            raise Http404("No such topic.")
        topic = get_object_or_404(Topic, slug=slug)
        notes = notes.in_topic(topic)
    page = _page(request, notes.with_marks())
    context = {
        "page": page,
        "notes": page.object_list,
        "kind": kind,
        "kinds": Note.Kind.choices,
        "topic": topic,
        "topics": Topic.objects.all(),
    }
    template = "notebook/index.html#note-list" if request.htmx else "notebook/index.html"
    return render(request, template, context)


@require_GET
def topic(request: HttpRequest, slug: str) -> HttpResponse:
    topic = get_object_or_404(Topic, slug=slug)
    page = _page(request, Note.objects.published().in_topic(topic).with_marks())
    return render(
        request, "notebook/topic.html", {"topic": topic, "page": page, "notes": page.object_list}
    )


def _note_or_404(request: HttpRequest, slug: str) -> Note:
    notes = Note.objects.all() if request.user.is_staff else Note.objects.published()
    return get_object_or_404(notes.with_marks(), slug=slug)


@require_GET
def note(request: HttpRequest, slug: str) -> HttpResponse:
    note = _note_or_404(request, slug)
    return render(request, "notebook/note.html", {"note": note})


@require_GET
def note_checks(request: HttpRequest, slug: str) -> HttpResponse:
    """Every check of a note with its latest run's output (what Verified links to)."""
    note = _note_or_404(request, slug)
    checks = SnippetCheck.objects.filter(note=note).select_related("latest_run")
    checks = checks.prefetch_related(
        Prefetch(
            "runs", queryset=SnippetRun.objects.order_by("-started_at", "-id"), to_attr="all_runs"
        )
    )
    return render(request, "notebook/checks.html", {"note": note, "checks": checks})


@require_GET
def search(request: HttpRequest) -> HttpResponse:
    query = " ".join(request.GET.get("q", "").split())[:MAX_QUERY_LENGTH]
    page = None
    if query:
        page = _page(request, Note.objects.published().search(query).with_marks())
    context = {"query": query, "page": page, "notes": page.object_list if page else []}
    return render(request, "notebook/search.html", context)

"""Derived data only: anonymous progress follows its owner into their account; cached chapter
pages are invalidated when what they show is edited."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.auth.signals import user_logged_in
from django.core.cache import cache
from django.db.models import Q
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone

from notebook.models import Note

from . import page_cache
from .learners import ANON_KEY, learning_changed
from .models import (
    Chapter,
    ChapterProgress,
    ChapterSymbol,
    Choice,
    CodeListing,
    Course,
    Equation,
    EquationPart,
    LabelAttempt,
    Question,
    QuizAttempt,
    ReviewCard,
    Symbol,
    Walkthrough,
)
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


# --- cache invalidation -------------------------------------------------------------------
# A chapter page's article is cached under its chapter's and course's ``updated_at``
# (page_cache.article_key). Every edit of something the article shows moves those times, with
# plain UPDATEs (which send no signals, so nothing loops).


class _Deferred:
    """Inside one_invalidation(): edits mark this instead of touching chapters themselves."""

    edited = False


_deferred: ContextVar[_Deferred | None] = ContextVar("courses_invalidation_deferred", default=None)


@contextmanager
def one_invalidation() -> Iterator[None]:
    """Within the block, edits do not touch their chapters one by one (a content load saves
    hundreds of rows); when it ends, if anything was edited, every chapter's cached page is
    invalidated once. Nested blocks invalidate at the end of the outermost one."""
    if _deferred.get() is not None:
        yield
        return
    pending = _Deferred()
    token = _deferred.set(pending)
    try:
        yield
    finally:
        _deferred.reset(token)
        if pending.edited:
            _touch(Chapter.objects.all())


def _touch(chapters) -> None:
    pending = _deferred.get()
    if pending is not None:
        pending.edited = True
        return
    Chapter.objects.filter(pk__in=chapters.values("pk")).update(updated_at=timezone.now())
    _forget_versions(chapters)


def _forget_versions(chapters) -> None:
    """Drop the cached versions the anonymous page path reads (page_cache.public_version)."""
    slugs = chapters.values_list("course__slug", "slug")
    cache.delete_many([page_cache.version_key(course, chapter) for course, chapter in slugs])


def _chapter_changed(sender, instance, **kwargs) -> None:
    now = timezone.now()
    Course.objects.filter(pk=instance.course_id).update(updated_at=now)  # previous/next links
    citing = Chapter.objects.filter(Q(prerequisites=instance.pk) | Q(related_chapters=instance.pk))
    citing.update(updated_at=now)
    _forget_versions(Chapter.objects.filter(Q(course=instance.course_id) | Q(pk__in=citing)))
    for course_slug in Course.objects.filter(pk=instance.course_id).values_list("slug", flat=True):
        cache.delete(page_cache.version_key(course_slug, instance.slug))  # even if unpublished


def _child_changed(sender, instance, **kwargs) -> None:
    if isinstance(instance, EquationPart):
        chapters = Chapter.objects.filter(equations=instance.equation_id)
    elif isinstance(instance, Choice):
        chapters = Chapter.objects.filter(questions=instance.question_id)
    elif isinstance(instance, Symbol):
        # Its chips, and every equation's part tooltips (they quote whichever glossary entry
        # a part is about, courses.explorable): any chapter with an equation.
        chapters = Chapter.objects.filter(
            Q(chapter_symbols__symbol=instance.pk) | Q(equations__isnull=False)
        ).distinct()
    elif isinstance(instance, Note):
        chapters = Chapter.objects.filter(related_notes=instance.pk)
    else:  # Equation, CodeListing, Question, ChapterSymbol
        chapters = Chapter.objects.filter(pk=instance.chapter_id)
    _touch(chapters)


def _links_changed(sender, instance, pk_set, action, **kwargs) -> None:
    if action not in {"post_add", "post_remove", "post_clear"}:
        return
    ids = {instance.pk} if isinstance(instance, Chapter) else set()
    if kwargs.get("model") is Chapter and pk_set:
        ids |= set(pk_set)
    if ids:
        _touch(Chapter.objects.filter(pk__in=ids))


def _learning_changed(sender, instance, **kwargs) -> None:
    """A learner's own row was saved or deleted: their cached pages are out of date."""
    learning_changed(instance.user_id)


def connect_cache_invalidation() -> None:
    for signal in (post_save, post_delete):
        # What a chapter page shows about its reader (bulk writes call learning_changed).
        for model in (QuizAttempt, LabelAttempt, ChapterProgress, ReviewCard, Walkthrough):
            signal.connect(
                _learning_changed,
                sender=model,
                dispatch_uid=f"courses-learner-{model.__name__}-{signal}",
            )
        signal.connect(_chapter_changed, sender=Chapter, dispatch_uid=f"courses-ch-{signal}")
        for model in (
            ChapterSymbol,
            Choice,
            CodeListing,
            Equation,
            EquationPart,
            Question,
            Symbol,
            Note,
        ):
            signal.connect(
                _child_changed, sender=model, dispatch_uid=f"courses-{model.__name__}-{signal}"
            )
    for through in (
        Chapter.prerequisites.through,
        Chapter.related_chapters.through,
        Chapter.related_notes.through,
    ):
        m2m_changed.connect(
            _links_changed, sender=through, dispatch_uid=f"courses-m2m-{through.__name__}"
        )

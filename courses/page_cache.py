"""The chapter page cache: what a chapter page may be served from, and under which keys.

* The article part of a page is cached per content version and *learner state* (signed in or
  not, questions done, passed, finished): ``article_key``.
* For a reader with no session at all (most visitors) the whole page is cached:
  ``public_version`` finds the chapter's version without the database on a hit, ``page_key``
  names the page.
* Keys carry a fingerprint of the page's templates, so a deploy never serves old markup.
* Cached HTML holds ``CSRF_PLACEHOLDER`` where a CSRF token goes; ``with_csrf_token`` puts the
  reader's own token in on the way out.

``signals.py`` keeps the keys honest: every edit of something a page shows moves the
``updated_at`` of the chapters and course concerned and forgets their cached versions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache as cache_function
from typing import NamedTuple

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.loader import get_template
from django.utils import timezone

from platform.rendering import RENDERER_VERSION

from .learners import ANONYMOUS_SEED, Learner
from .models import Chapter, ChapterProgress, LabelAttempt, QuizAttempt, ReviewCard

ARTICLE_TEMPLATE = "courses/_chapter.html"
CHAPTER_TEMPLATE = "courses/chapter.html"
PAGE_TEMPLATES = (
    ARTICLE_TEMPLATE,
    CHAPTER_TEMPLATE,
    "courses/_verdict.html",
    "courses/_label_part.html",
    "base.html",
    "newsletter/_box.html",
)

BODY_TTL = 60 * 60
PUBLIC_VERSION_TTL = 5
CSRF_PLACEHOLDER = "csrf-token-placeholder-5be1"


@dataclass(frozen=True)
class QuestionState:
    """Where one check question stands for the reader.

    ``status``: "new" (answer it), "retry" (a first wrong try; that choice's explanation shows
    and the learner may try again), "right" (answered right: counts for the check), "revealed"
    (the answer was shown; it may be answered again from ``due``).
    """

    status: str
    choice_id: int | None = None
    due: datetime | None = None


@dataclass(frozen=True)
class LearnerState:
    """All a chapter page shows about its reader: the cache key's learner part."""

    signed_in: bool
    done: frozenset[int]
    progress: ChapterProgress | None
    labelled: frozenset[int] = frozenset()  # equations whose parts the learner has checked
    seed: str = ANONYMOUS_SEED
    questions: dict[int, QuestionState] = field(default_factory=dict)

    @classmethod
    def read(
        cls,
        request: HttpRequest,
        learner: Learner | None,
        chapter: Chapter,
        *,
        now: datetime | None = None,
    ) -> LearnerState:
        if learner is None:  # a reader who has never answered anything
            return cls(request.user.is_authenticated, frozenset(), None)
        now = now or timezone.now()
        last: dict[int, tuple[int | None, bool, bool]] = {}  # question → (choice, correct, closed)
        right: dict[int, int | None] = {}
        for question_id, choice_id, correct, rating in (
            QuizAttempt.objects.for_learner(learner)
            .filter(question__chapter=chapter)
            .order_by("created_at", "id")
            .values_list("question_id", "choice_id", "correct", "rating")
        ):
            last[question_id] = (choice_id, correct, rating is not None)
            if correct:
                right[question_id] = choice_id
        cards = {
            question_id: (tries, due)
            for question_id, tries, due in ReviewCard.objects.for_learner(learner)
            .filter(question__chapter=chapter)
            .values_list("question_id", "tries", "due")
        }
        questions: dict[int, QuestionState] = {}
        for question_id, (choice_id, _correct, _closed) in last.items():
            tries, due = cards.get(question_id, (0, None))
            if question_id in right:
                questions[question_id] = QuestionState("right", right[question_id])
            elif tries:
                questions[question_id] = QuestionState("retry", choice_id)
            elif due is not None and due > now:
                questions[question_id] = QuestionState("revealed", None, due)
        progress = ChapterProgress.objects.for_learner(learner).filter(chapter=chapter).first()
        labelled = frozenset(
            LabelAttempt.objects.for_learner(learner)
            .filter(part__equation__chapter=chapter)
            .values_list("part__equation_id", flat=True)
            .distinct()
        )
        return cls(
            request.user.is_authenticated,
            frozenset(right),
            progress,
            labelled=labelled,
            seed=learner.seed,
            questions=questions,
        )

    def key(self) -> str:
        progress = self.progress
        finished = (
            progress.finished_at.date().isoformat() if progress and progress.finished_at else ""
        )
        passed = bool(progress and progress.check_passed_at)
        questions = sorted(
            (pk, q.status, q.choice_id, q.due.isoformat() if q.due else "")
            for pk, q in self.questions.items()
        )
        raw = (
            f"{self.signed_in}|{sorted(self.done)}|{passed}|{finished}|{sorted(self.labelled)}"
            f"|{self.seed}|{questions}"
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:32]


# Someone not signed in who has answered nothing: what every session-less reader sees.
NEW_READER = LearnerState(signed_in=False, done=frozenset(), progress=None)


class ChapterVersion(NamedTuple):
    """What identifies the content of a published chapter's page."""

    pk: int
    updated_at: datetime
    course_updated_at: datetime


@cache_function
def templates_fingerprint() -> str:
    """Changes when a template of the page or the renderer's output changes, so a deploy never
    serves old markup."""
    sources = RENDERER_VERSION + "".join(
        get_template(name).template.source  # type: ignore[attr-defined]  # the engine's Template
        for name in PAGE_TEMPLATES
    )
    return hashlib.sha256(sources.encode()).hexdigest()[:12]


def _key(version: ChapterVersion, state: LearnerState) -> str:
    stamp = f"{version.updated_at.timestamp()}:{version.course_updated_at.timestamp()}"
    return f"courses:chapter:{templates_fingerprint()}:{version.pk}:{stamp}:{state.key()}"


def article_key(chapter: Chapter, state: LearnerState) -> str:
    """Changes whenever the chapter, anything in it, its course or what it links to changes,
    or what the page shows about its reader."""
    version = ChapterVersion(chapter.pk, chapter.updated_at, chapter.course.updated_at)
    return _key(version, state)


def page_key(version: ChapterVersion) -> str:
    """The whole page of a published chapter as a session-less reader sees it."""
    return "page:" + _key(version, NEW_READER)


def learner_page_key(version: ChapterVersion, user_id: int, learning_rev: int) -> str:
    """A signed-in learner's whole page of a published chapter: it changes when the chapter
    does and when anything they did changes (``User.learning_rev``), so it is never stale."""
    return f"learner:{user_id}:{learning_rev}:" + _key(version, NEW_READER)


def version_key(course_slug: str, chapter_slug: str) -> str:
    """Where ``public_version`` keeps a published chapter's version; signals.py deletes it."""
    return f"courses:version:{course_slug}/{chapter_slug}"


def cached(key: str, render: Callable[[], str]) -> str:
    """The HTML cached under ``key``, rendered and kept for ``BODY_TTL`` seconds if missing."""
    html = cache.get(key)
    if html is None:
        html = render()
        cache.set(key, html, BODY_TTL)
    return html


class LearnerPage(NamedTuple):
    """A cached learner page: its HTML (CSRF placeholder inside), until when it holds (a revealed
    answer turns back into a question when its card falls due) and when the visit was noted."""

    html: str
    valid_until: float
    visited_at: float


def learner_page_until(state: LearnerState, now: datetime) -> float:
    """The moment the page stops being true without anything being written: the earliest due
    time of a question whose answer was revealed, or the cache's own time-to-live."""
    until = now.timestamp() + BODY_TTL
    for question in state.questions.values():
        if question.status == "revealed" and question.due is not None:
            until = min(until, question.due.timestamp())
    return until


def sessionless(request: HttpRequest) -> bool:
    """A reader with no session and no pending message: every such reader sees the same page."""
    return (
        not request.user.is_authenticated
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "messages" not in request.COOKIES
    )


def public_version(course_slug: str, chapter_slug: str) -> ChapterVersion | None:
    """The version of a published chapter; None if there is no such published chapter.

    The version is itself cached for a few seconds, so a page served from the cache needs no
    database at all. Edits delete that entry (signals.py); a server process whose local-memory
    cache did not see the edit serves the old page for at most ``PUBLIC_VERSION_TTL`` seconds.
    Signed-in and anonymous learners always get the current version.
    """
    key = version_key(course_slug, chapter_slug)
    row = cache.get(key)
    if row is None:
        found = (
            Chapter.objects.published()
            .filter(course__slug=course_slug, slug=chapter_slug)
            .order_by()
            .values_list("pk", "updated_at", "course__updated_at")[:1]
        )
        row = tuple(found[0]) if found else ()
        cache.set(key, row, PUBLIC_VERSION_TTL)
    return ChapterVersion(*row) if row else None


def with_csrf_token(html: str, request: HttpRequest) -> str:
    """Cached HTML with the reader's own CSRF token in place of the placeholder."""
    return html.replace(CSRF_PLACEHOLDER, get_token(request))

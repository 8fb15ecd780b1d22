"""Workflows of the courses app that write learner records. Keyword-only, side effects listed."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from platform import sandbox

from .learners import Learner
from .models import (
    Chapter,
    ChapterProgress,
    Choice,
    CodeListing,
    Equation,
    EquationPart,
    LabelAttempt,
    Question,
    QuizAttempt,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnswerResult:
    question: Question
    choice: Choice
    correct: bool


@dataclass(frozen=True)
class PartResult:
    part: EquationPart
    role: str
    correct: bool

    @property
    def role_label(self) -> str:
        return EquationPart.Role(self.role).label


def _progress(learner: Learner, chapter: Chapter) -> ChapterProgress:
    """The learner's progress row for the chapter, created if missing (locked for update)."""
    owner = learner.owner_fields()
    try:
        with transaction.atomic():
            progress, _ = ChapterProgress.objects.select_for_update().get_or_create(
                chapter=chapter, **owner
            )
    except IntegrityError:  # a concurrent request created it first
        progress = ChapterProgress.objects.select_for_update().get(chapter=chapter, **owner)
    return progress


def _refresh_check(progress: ChapterProgress, learner: Learner, *, now: datetime) -> bool:
    """Set ``check_passed_at`` once every question has a correct attempt. True if it changed."""
    if progress.check_passed_at is not None:
        return False
    question_ids = set(progress.chapter.questions.values_list("id", flat=True))
    if not question_ids:
        return False
    done = set(
        QuizAttempt.objects.for_learner(learner)
        .correct()
        .filter(question_id__in=question_ids)
        .values_list("question_id", flat=True)
    )
    if done >= question_ids:
        progress.check_passed_at = now
        return True
    return False


def answer_questions(
    *, learner: Learner, chapter: Chapter, answers: list[tuple[Question, Choice]]
) -> list[AnswerResult]:
    """Grade the learner's answers to check questions of one chapter and keep them.

    Side effects: one QuizAttempt row per answer; the learner's ChapterProgress for the chapter
    is created if needed, its ``updated_at`` moved to now, and ``check_passed_at`` set the first
    time every question of the chapter has been answered correctly at least once.
    The caller has checked that each choice belongs to its question and each question to the
    chapter.
    """
    now = timezone.now()
    results = [AnswerResult(q, c, c.is_correct) for q, c in answers]
    with transaction.atomic():
        QuizAttempt.objects.bulk_create(
            QuizAttempt(
                question=r.question,
                choice=r.choice,
                correct=r.correct,
                created_at=now,
                **learner.owner_fields(),
            )
            for r in results
        )
        progress = _progress(learner, chapter)
        progress.updated_at = now
        _refresh_check(progress, learner, now=now)
        progress.save(update_fields=["updated_at", "check_passed_at"])
    return results


def label_parts(
    *, learner: Learner, equation: Equation, roles: list[tuple[EquationPart, str]]
) -> list[PartResult]:
    """Check the roles a learner picked for an equation's parts and keep every pick.

    Side effects: one LabelAttempt row per part; the learner's ChapterProgress for the
    equation's chapter is created if needed and its ``updated_at`` moved to now.
    """
    now = timezone.now()
    results = [PartResult(part, role, part.role == role) for part, role in roles]
    with transaction.atomic():
        LabelAttempt.objects.bulk_create(
            LabelAttempt(
                part=r.part,
                role=r.role,
                correct=r.correct,
                created_at=now,
                **learner.owner_fields(),
            )
            for r in results
        )
        progress = _progress(learner, equation.chapter)
        progress.updated_at = now
        progress.save(update_fields=["updated_at"])
    return results


def set_finished(*, learner: Learner, chapter: Chapter, finished: bool) -> ChapterProgress:
    """Mark the chapter finished (keeping the first time) or not finished.

    Side effects: creates or updates the learner's ChapterProgress (``finished_at``,
    ``updated_at``).
    """
    now = timezone.now()
    with transaction.atomic():
        progress = _progress(learner, chapter)
        if finished and progress.finished_at is None:
            progress.finished_at = now
        elif not finished:
            progress.finished_at = None
        progress.updated_at = now
        progress.save(update_fields=["finished_at", "updated_at"])
    return progress


# "Continue where you left off" needs to know the last chapter, not every reload of it.
VISIT_RESOLUTION = timedelta(minutes=5)


def record_visit(
    *, learner: Learner, chapter: Chapter, progress: ChapterProgress | None = None
) -> None:
    """Remember that the learner opened the chapter ("continue where you left off").

    Side effects: updates ``last_visited_at`` and ``updated_at`` of the learner's
    ChapterProgress, creating the row on a first visit. Given the ``progress`` the caller has
    already read, a visit within VISIT_RESOLUTION of the last one writes nothing: a reload must
    not cost a database write.
    """
    now = timezone.now()
    last = progress.last_visited_at if progress is not None else None
    if last is not None and now - last < VISIT_RESOLUTION:
        return
    updated = (
        ChapterProgress.objects.for_learner(learner)
        .filter(chapter=chapter)
        .update(last_visited_at=now, updated_at=now)
    )
    if not updated:
        try:
            with transaction.atomic():
                ChapterProgress.objects.create(
                    chapter=chapter, last_visited_at=now, updated_at=now, **learner.owner_fields()
                )
        except IntegrityError:  # created meanwhile by a concurrent request: the visit counts
            pass


def merge_anonymous_progress(*, anon_key: str, user_id: int) -> dict[str, int]:
    """Hand an anonymous session's attempts and progress to the account that just logged in.

    Side effects: QuizAttempt and LabelAttempt rows of ``anon_key`` are re-owned by the user
    (moved, never copied, so nothing counts twice); ChapterProgress rows are moved, or folded
    into the user's own row for the same chapter (earliest check pass and finish, latest visit)
    and deleted; ``check_passed_at`` is re-derived for the chapters touched, since answers from
    both sides may now complete a check together. Running it again finds nothing to move.
    """
    if not anon_key:
        return {"quiz": 0, "label": 0, "progress": 0}
    user_learner = Learner(user_id=user_id)
    anon_learner = Learner(anon_key=anon_key)
    with transaction.atomic():
        quiz = QuizAttempt.objects.for_learner(anon_learner).update(user_id=user_id, anon_key="")
        label = LabelAttempt.objects.for_learner(anon_learner).update(user_id=user_id, anon_key="")
        anon_rows = list(
            ChapterProgress.objects.for_learner(anon_learner).select_related("chapter")
        )
        mine = {
            p.chapter_id: p
            for p in ChapterProgress.objects.for_learner(user_learner)
            .filter(chapter_id__in=[p.chapter_id for p in anon_rows])
            .select_for_update()
        }
        # Every answer creates a progress row for its chapter, so these are all the chapters
        # whose check may have been completed by putting both sides' answers together.
        touched_chapters = {p.chapter_id for p in anon_rows}
        for row in anon_rows:
            own = mine.get(row.chapter_id)
            if own is None:
                row.user_id, row.anon_key = user_id, ""
                row.save(update_fields=["user", "anon_key"])
                mine[row.chapter_id] = row
                continue
            own.check_passed_at = _earliest_of(own.check_passed_at, row.check_passed_at)
            own.finished_at = _earliest_of(own.finished_at, row.finished_at)
            own.last_visited_at = _latest_of(own.last_visited_at, row.last_visited_at)
            own.updated_at = max(own.updated_at, row.updated_at)
            own.save()
            row.delete()
        for chapter in Chapter.objects.filter(id__in=touched_chapters):
            progress = mine.get(chapter.id) or _progress(user_learner, chapter)
            progress.chapter = chapter
            if _refresh_check(progress, user_learner, now=timezone.now()):
                progress.save(update_fields=["check_passed_at"])
    if quiz or label or anon_rows:
        log.info(
            "merged anonymous progress into user %s: %s quiz, %s label, %s chapters",
            user_id,
            quiz,
            label,
            len(anon_rows),
        )
    return {"quiz": quiz, "label": label, "progress": len(anon_rows)}


def _earliest_of(a: datetime | None, b: datetime | None) -> datetime | None:
    return min(x for x in (a, b) if x is not None) if (a or b) else None


def _latest_of(a: datetime | None, b: datetime | None) -> datetime | None:
    return max(x for x in (a, b) if x is not None) if (a or b) else None


def check_listing(*, listing: CodeListing) -> CodeListing:
    """Run a Python listing in the snippet sandbox and keep whether it prints its output.

    Side effects: runs the code in the bubblewrap sandbox (platform/sandbox.py); saves the
    listing's check_status, checked_at and check_detail (which moves the chapter's version
    through signals, so cached pages show the new result). Never raises for what the code does.
    """
    from django.conf import settings

    if listing.language.lower() not in ("python", "py", "python3"):
        result = sandbox.RunResult(status=sandbox.NOT_RUN, detail="Only Python listings are run.")
    else:
        result = sandbox.run_snippet(
            listing.source,
            expected_output=listing.expected_output,
            time_limit=settings.SNIPPET_TIME_LIMIT,
            memory_limit_mb=settings.SNIPPET_MEMORY_LIMIT_MB,
            max_output_bytes=settings.SNIPPET_MAX_OUTPUT_BYTES,
        )
    listing.check_status = CodeListing.CheckStatus(result.status)
    listing.checked_at = timezone.now()
    listing.check_detail = result.diff or result.detail or ""
    listing.save(update_fields=["check_status", "checked_at", "check_detail"])
    log.info("listing %s (%s): %s", listing.pk, listing.filename, result.status)
    return listing

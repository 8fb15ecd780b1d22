"""Workflows of the courses app that write learner records. Keyword-only, side effects listed."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, OuterRef, Q, Subquery
from django.utils import timezone

from platform import sandbox

from . import review
from .learners import Learner, learning_changed
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
    ReviewCard,
    ReviewReminder,
)

log = logging.getLogger(__name__)


class NotAnswerable(Exception):
    """The answer cannot be taken now (already right, or shown and not due yet): 409."""


@dataclass(frozen=True)
class AnswerResult:
    question: Question
    choice: Choice | None  # None: "Show me"
    correct: bool
    step: review.Step
    card: ReviewCard

    @property
    def may_retry(self) -> bool:
        return self.step.may_retry

    @property
    def revealed(self) -> bool:
        return self.step.revealed


@dataclass(frozen=True)
class PartResult:
    part: EquationPart
    role: str
    correct: bool

    @property
    def role_label(self) -> str:
        return EquationPart.Role(self.role).label


@dataclass(frozen=True)
class LabelResult:
    parts: list[PartResult]
    step: review.Step | None  # None: practice on a card that is not due (not rated)

    @property
    def correct(self) -> bool:
        return all(p.correct for p in self.parts)

    @property
    def revealed(self) -> bool:
        """Whether the right roles may be shown: all right, or the round is over."""
        return self.step is None or not self.step.may_retry


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


def _card(
    learner: Learner,
    *,
    now: datetime,
    question: Question | None = None,
    equation: Equation | None = None,
) -> ReviewCard:
    """The learner's card for a question or an equation's label set, created (due now) if
    missing, locked for update."""
    subject = {"question": question} if question is not None else {"equation": equation}
    owner = learner.owner_fields()
    cards = ReviewCard.objects.select_for_update()
    card = cards.filter(**subject, **owner).first()
    if card is not None:
        return card
    state = review.new_card_state(now)
    try:
        with transaction.atomic():
            return ReviewCard.objects.create(
                **subject, **owner, fsrs_card=state, due=review.due_of(state)
            )
    except IntegrityError:  # a concurrent request created it first
        return cards.get(**subject, **owner)


def _record_answer(
    learner: Learner, card: ReviewCard, question: Question, choice: Choice | None, now: datetime
) -> AnswerResult:
    if choice is None:
        step = review.show_answer(card, now=now)
    else:
        step = review.try_card(card, correct=choice.is_correct, now=now)
    card.save()
    QuizAttempt.objects.create(
        question=question,
        choice=choice,
        correct=step.correct,
        rating=None if step.rating is None else int(step.rating),
        created_at=now,
        **learner.owner_fields(),
    )
    return AnswerResult(question, choice, step.correct, step, card)


def _after_answer(learner: Learner, chapter: Chapter, now: datetime) -> None:
    progress = _progress(learner, chapter)
    progress.updated_at = now
    _refresh_check(progress, learner, now=now)
    progress.save(update_fields=["updated_at", "check_passed_at"])


def answer_questions(
    *,
    learner: Learner,
    chapter: Chapter,
    answers: list[tuple[Question, Choice | None]],
    now: datetime | None = None,
) -> list[AnswerResult]:
    """Grade the learner's answers to check questions of one chapter (a choice, or None for
    "Show me") and keep them.

    Each answer is one try in its question's round (courses.review): a wrong first try may be
    tried again, a second wrong try or "Show me" reveals the answer. A question already answered
    right, or whose answer was shown and is not due again, raises NotAnswerable (nothing saved).

    Side effects: one QuizAttempt per answer; the learner's ReviewCard for each question is
    created if needed and rated through FSRS when its round ends; the learner's ChapterProgress
    is created if needed, its ``updated_at`` moved to now, and ``check_passed_at`` set the first
    time every question of the chapter has a correct answer. The caller has checked that each
    choice belongs to its question and each question to the chapter.
    """
    now = now or timezone.now()
    with transaction.atomic():
        done = set(
            QuizAttempt.objects.for_learner(learner)
            .correct()
            .filter(question__in=[q for q, _ in answers])
            .values_list("question_id", flat=True)
        )
        numbers = {q.pk: n for n, q in enumerate(chapter.questions.all(), start=1)}
        results = []
        for question, choice in answers:
            number = numbers.get(question.pk, "")
            if question.pk in done:
                raise NotAnswerable(
                    f"Question {number} is already answered right; it comes back in your review."
                )
            card = _card(learner, question=question, now=now)
            if not card.is_due(now):
                raise NotAnswerable(
                    f"The answer to question {number} was shown; try it again from "
                    f"{timezone.localtime(card.due):%H:%M}, or in your review."
                )
            results.append(_record_answer(learner, card, question, choice, now))
        _after_answer(learner, chapter, now)
    return results


def label_parts(
    *,
    learner: Learner,
    equation: Equation,
    roles: list[tuple[EquationPart, str]],
    now: datetime | None = None,
) -> LabelResult:
    """Check the roles a learner picked for an equation's parts and keep every pick.

    The label set is one card: when it is new, due, or its round is open, this submission is a
    try of its round (all right → Good or Hard, otherwise a first wrong try may be retried and a
    second one reveals the roles, Again); when it is not due, it is practice and rates nothing.

    Side effects: one LabelAttempt row per part; the equation's ReviewCard is created if needed
    and rated as above; the learner's ChapterProgress for the equation's chapter is created if
    needed and its ``updated_at`` moved to now.
    """
    now = now or timezone.now()
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
        learning_changed(learner.user_id)  # bulk_create sends no post_save
        card = _card(learner, equation=equation, now=now)
        step = None
        if card.is_due(now):
            step = review.try_card(card, correct=all(r.correct for r in results), now=now)
            card.save()
        progress = _progress(learner, equation.chapter)
        progress.updated_at = now
        progress.save(update_fields=["updated_at"])
    return LabelResult(results, step)


def review_question(
    *, learner: Learner, card: ReviewCard, choice: Choice | None, now: datetime | None = None
) -> AnswerResult:
    """One try at a question card in the review session (a choice, or None for "Show me").

    Side effects: those of ``answer_questions`` for this one answer (a QuizAttempt, the card's
    round and FSRS state, the chapter's progress and check). The caller has checked that the
    card is the learner's, is due, and that the choice belongs to its question.
    """
    now = now or timezone.now()
    question = card.question
    assert question is not None
    with transaction.atomic():
        locked = ReviewCard.objects.select_for_update().get(pk=card.pk)
        result = _record_answer(learner, locked, question, choice, now)
        _after_answer(learner, question.chapter, now)
    return result


def review_labels(
    *,
    learner: Learner,
    card: ReviewCard,
    roles: list[tuple[EquationPart, str]],
    now: datetime | None = None,
) -> LabelResult:
    """One try at an equation's label set in the review session.

    Side effects: those of ``label_parts``. The caller has checked that the card is the
    learner's and is due.
    """
    assert card.equation is not None
    return label_parts(learner=learner, equation=card.equation, roles=roles, now=now)


def set_finished(*, learner: Learner, chapter: Chapter, finished: bool) -> ChapterProgress:
    """Mark the chapter finished (keeping the first time) or not finished.

    Finishing is the learner's word that they have read it; it does not pass the check
    (``ChapterProgress.status``: "read" until the check is passed).

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
    (moved, never copied, so nothing counts twice); so are its ReviewCards, except where the
    user has a card for the same thing: then the one reviewed last is kept and the other
    deleted; ChapterProgress rows are moved, or folded
    into the user's own row for the same chapter (earliest check pass and finish, latest visit)
    and deleted; ``check_passed_at`` is re-derived for the chapters touched, since answers from
    both sides may now complete a check together. Running it again finds nothing to move.
    """
    if not anon_key:
        return {"quiz": 0, "label": 0, "progress": 0, "cards": 0}
    user_learner = Learner(user_id=user_id)
    anon_learner = Learner(anon_key=anon_key)
    with transaction.atomic():
        quiz = QuizAttempt.objects.for_learner(anon_learner).update(user_id=user_id, anon_key="")
        label = LabelAttempt.objects.for_learner(anon_learner).update(user_id=user_id, anon_key="")
        if quiz or label:
            learning_changed(user_id)  # update() sends no post_save
        cards = _merge_cards(anon_learner, user_learner)
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
    if quiz or label or anon_rows or cards:
        log.info(
            "merged anonymous progress into user %s: %s quiz, %s label, %s chapters, %s cards",
            user_id,
            quiz,
            label,
            len(anon_rows),
            cards,
        )
    return {"quiz": quiz, "label": label, "progress": len(anon_rows), "cards": cards}


def _merge_cards(anon: Learner, user: Learner) -> int:
    """Move the anonymous learner's review cards to the user. Where both have a card for the
    same question or label set, the one reviewed last is kept (it holds the latest schedule)."""
    anon_cards = list(ReviewCard.objects.for_learner(anon).select_for_update())
    if not anon_cards:
        return 0
    own = {
        (c.question_id, c.equation_id): c
        for c in ReviewCard.objects.for_learner(user)
        .select_for_update()
        .filter(
            Q(question__in=[c.question_id for c in anon_cards if c.question_id])
            | Q(equation__in=[c.equation_id for c in anon_cards if c.equation_id])
        )
    }
    epoch = datetime.min.replace(tzinfo=UTC)
    for card in anon_cards:
        mine = own.get((card.question_id, card.equation_id))
        if mine is not None:
            if (mine.last_reviewed_at or epoch) >= (card.last_reviewed_at or epoch):
                card.delete()
                continue
            mine.delete()
        card.user_id, card.anon_key = user.user_id, ""
        card.save(update_fields=["user", "anon_key"])
    return len(anon_cards)


def _earliest_of(a: datetime | None, b: datetime | None) -> datetime | None:
    return min(x for x in (a, b) if x is not None) if (a or b) else None


def _latest_of(a: datetime | None, b: datetime | None) -> datetime | None:
    return max(x for x in (a, b) if x is not None) if (a or b) else None


def set_review_reminder(*, user, enabled: bool) -> ReviewReminder:
    """Turn a learner's review reminder emails on or off.

    Side effects: creates or updates the user's ReviewReminder row.
    """
    reminder, _ = ReviewReminder.objects.update_or_create(user=user, defaults={"enabled": enabled})
    return reminder


def send_review_reminders(*, now: datetime | None = None) -> int:
    """Mail every learner who opted in and has review cards due by the end of today, at most
    once a day. Returns how many were sent.

    Side effects: one email per such learner (plain text, with a link to /review/ and a
    one-click turn-off link, also in ``List-Unsubscribe``); their ReviewReminder's
    ``last_sent_at`` set to now after each send.
    """
    from django.conf import settings
    from django.core.mail import EmailMessage
    from django.template.loader import render_to_string
    from django.urls import reverse

    from .tokens import reminder_token

    now = now or timezone.now()
    local = timezone.localtime(now)
    start_of_day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    end_of_day = start_of_day + timedelta(days=1)
    due = (
        ReviewCard.objects.published()
        .filter(user=OuterRef("user"))
        .filter(Q(due__lt=end_of_day) | Q(tries__gt=0))
        .order_by()
        .values("user")
        .annotate(n=Count("id"))
        .values("n")
    )
    reminders = (
        ReviewReminder.objects.filter(enabled=True, user__is_active=True)
        .filter(Q(last_sent_at__isnull=True) | Q(last_sent_at__lt=start_of_day))
        .annotate(due_count=Subquery(due))
        .filter(due_count__gt=0)
        .select_related("user")
    )
    sent = 0
    for reminder in reminders:
        user = reminder.user
        off_url = settings.SITE_URL + reverse("review:reminders_off", args=[reminder_token(user)])
        context = {
            "count": reminder.due_count,
            "review_url": settings.SITE_URL + reverse("review:session"),
            "off_url": off_url,
        }
        message = EmailMessage(
            subject=render_to_string("courses/email/reminder_subject.txt", context).strip(),
            body=render_to_string("courses/email/reminder.txt", context),
            to=[user.email],
            headers={
                "List-Unsubscribe": f"<{off_url}>",
                "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            },
        )
        message.send()
        reminder.last_sent_at = now
        reminder.save(update_fields=["last_sent_at"])
        sent += 1
    return sent


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

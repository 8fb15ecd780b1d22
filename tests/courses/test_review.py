"""Spaced review with FSRS: the schedule against ``fsrs`` itself over 30 simulated days, the
/review/ session, bad input, query counts, anonymous cards moving to the account, reminders."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import fsrs
import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from courses import services, tasks
from courses.learners import ANON_KEY, Learner
from courses.models import QuizAttempt, ReviewCard, ReviewReminder
from courses.tokens import reminder_token
from tests.support.chapters import urls

from .factories import (
    ChapterFactory,
    EquationFactory,
    EquationPartFactory,
    QuestionFactory,
    ReviewCardFactory,
    right,
    wrong,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
REVIEW = "/review/"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def questions(chapter):
    return list(chapter.questions.prefetch_related("choices"))


# --- the schedule is FSRS's own --------------------------------------------------------------


class Expected:
    """What fsrs.Scheduler gives for a card's rounds, computed here independently: one rating
    per round (right first → Good, right after a wrong try → Hard, second wrong or "Show me" →
    Again); a round left open after one wrong try holds Again from its start until it closes."""

    scheduler = fsrs.Scheduler(enable_fuzzing=False)

    def __init__(self, created: datetime) -> None:
        self.card = fsrs.Card(card_id=0, due=created)
        self.base: fsrs.Card | None = None
        self.ratings: list[fsrs.Rating] = []
        self.closed_at: list[datetime] = []

    def open(self, at: datetime) -> None:
        self.base = self.card
        self.card, _ = self.scheduler.review_card(self.card, fsrs.Rating.Again, at)

    def close(self, rating: fsrs.Rating, at: datetime) -> None:
        start = self.base or self.card
        self.card, _ = self.scheduler.review_card(start, rating, at)
        self.base = None
        self.ratings.append(rating)
        self.closed_at.append(at)


# One outcome per due card per day, cycling: what the simulated learner does.
OUTCOMES = ["right", "wrong-right", "right", "wrong-wrong", "right", "show", "wrong-leave", "right"]


def _question_try(learner, card, choice, at):
    return services.review_question(learner=learner, card=card, choice=choice, now=at)


def _play_question(learner, card, outcome: str, at: datetime, expect: Expected) -> None:
    question = card.question
    good, bad = right(question), wrong(question)
    if expect.base is not None:  # a round left open yesterday: this try closes it
        step = _question_try(learner, card, good, at)
        expect.close(fsrs.Rating.Hard, at)
        assert step.step.rating == fsrs.Rating.Hard
        return
    if outcome == "right":
        _question_try(learner, card, good, at)
        expect.close(fsrs.Rating.Good, at)
    elif outcome == "show":
        _question_try(learner, card, None, at)
        expect.close(fsrs.Rating.Again, at)
    else:
        _question_try(learner, card, bad, at)
        expect.open(at)
        later = at + timedelta(seconds=40)
        if outcome == "wrong-right":
            _question_try(learner, ReviewCard.objects.get(pk=card.pk), good, later)
            expect.close(fsrs.Rating.Hard, later)
        elif outcome == "wrong-wrong":
            _question_try(learner, ReviewCard.objects.get(pk=card.pk), bad, later)
            expect.close(fsrs.Rating.Again, later)


def _play_labels(learner, card, outcome: str, at: datetime, expect: Expected) -> None:
    parts = list(card.equation.parts.all())
    good = [(p, p.role) for p in parts]
    bad = [(p, "constant" if p.role != "constant" else "input") for p in parts]

    def label(roles, when):
        return services.review_labels(
            learner=learner, card=ReviewCard.objects.get(pk=card.pk), roles=roles, now=when
        )

    if expect.base is not None:
        label(good, at)
        expect.close(fsrs.Rating.Hard, at)
        return
    if outcome == "right":
        label(good, at)
        expect.close(fsrs.Rating.Good, at)
        return
    label(bad, at)
    expect.open(at)
    later = at + timedelta(seconds=40)
    if outcome == "wrong-right":
        label(good, later)
        expect.close(fsrs.Rating.Hard, later)
    elif outcome in ("wrong-wrong", "show"):
        label(bad, later)
        expect.close(fsrs.Rating.Again, later)


def test_thirty_simulated_days_give_exactly_the_fsrs_schedule(learner, chapter):
    me = Learner(user_id=learner.pk)
    q1, q2 = questions(chapter)
    equation = chapter.equations.get()
    y, w = equation.parts.all()

    # Day 0, on the chapter page: Q1 wrong then right, Q2 right, the labels right at once.
    services.answer_questions(learner=me, chapter=chapter, answers=[(q1, wrong(q1))], now=T0)
    t1 = T0 + timedelta(minutes=1)
    services.answer_questions(learner=me, chapter=chapter, answers=[(q1, right(q1))], now=t1)
    services.answer_questions(learner=me, chapter=chapter, answers=[(q2, right(q2))], now=t1)
    services.label_parts(
        learner=me, equation=equation, roles=[(y, "output"), (w, "learned")], now=t1
    )
    expected = {
        ("q", q1.pk): Expected(T0),
        ("q", q2.pk): Expected(t1),
        ("e", equation.pk): Expected(t1),
    }
    expected[("q", q1.pk)].open(T0)
    expected[("q", q1.pk)].close(fsrs.Rating.Hard, t1)
    expected[("q", q2.pk)].close(fsrs.Rating.Good, t1)
    expected[("e", equation.pk)].close(fsrs.Rating.Good, t1)

    def key(card: ReviewCard) -> tuple[str, int]:
        return ("q", card.question_id) if card.question_id else ("e", card.equation_id)

    def assert_matches_fsrs() -> None:
        cards = list(ReviewCard.objects.for_learner(me))
        assert len(cards) == 3
        for card in cards:
            want = expected[key(card)].card
            assert card.due == want.due, key(card)
            assert card.fsrs_card == want.to_dict(), key(card)

    assert_matches_fsrs()
    reviewed_on: set[int] = set()
    for day in range(1, 31):
        now = T0 + timedelta(days=day)
        due = list(ReviewCard.objects.for_learner(me).due(now).for_session())
        for n, card in enumerate(due):
            outcome = OUTCOMES[(day + n) % len(OUTCOMES)]
            if card.question_id:
                _play_question(me, card, outcome, now, expected[key(card)])
            else:
                _play_labels(me, card, outcome, now, expected[key(card)])
            reviewed_on.add(day)
        assert_matches_fsrs()

    # The walk exercised the scheduler: reviews on many days, every rating, and intervals that
    # grew to more than a week.
    ratings = {r for e in expected.values() for r in e.ratings}
    assert ratings == {fsrs.Rating.Again, fsrs.Rating.Hard, fsrs.Rating.Good}
    assert len(reviewed_on) >= 8
    gaps = [
        b - a for e in expected.values() for a, b in zip(e.closed_at, e.closed_at[1:], strict=False)
    ]
    assert max(gaps) > timedelta(days=7)
    assert QuizAttempt.objects.filter(user=learner).count() > 10  # every try kept


# --- the /review/ session --------------------------------------------------------------------


def test_review_session_serves_due_cards_one_at_a_time(learner_client, learner, chapter):
    q1, q2 = questions(chapter)
    ReviewCardFactory(user=learner, question=q1)
    ReviewCardFactory(user=learner, question=q2)
    later = ReviewCardFactory(user=learner, question=QuestionFactory(chapter=chapter))
    ReviewCard.objects.filter(pk=later.pk).update(due=later.due + timedelta(days=3))

    page = learner_client.get(REVIEW).content.decode()
    assert "Card 1 of 2" in page and '<progress id="review-progress" max="2" value="0">' in page
    first = ReviewCard.objects.for_session().first()
    assert first is not None and first.question is not None
    assert page.count('name="choice"') == 3

    # htmx: the card fragment only; a wrong try keeps the card with that choice's explanation.
    response = learner_client.post(
        f"{REVIEW}{first.pk}/", {"choice": wrong(first.question).pk}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "✗ Not quite.</strong> 4 is wrong." in html and "Try again" in html
    response = learner_client.post(f"{REVIEW}{first.pk}/", {"choice": right(first.question).pk})
    html = response.content.decode()
    assert "<html" in html  # no JavaScript: the whole page
    assert "✓ Right." in html and 'href="/review/"' in html and "Next card" in html
    first.refresh_from_db()
    assert first.last_rating == 2  # Hard

    page = learner_client.get(REVIEW, **HTMX).content.decode()
    assert "<html" not in page and "Card 2 of 2" in page
    second = ReviewCard.objects.for_learner(Learner(user_id=learner.pk)).get(tries=0, question=q2)
    learner_client.post(f"{REVIEW}{second.pk}/", {"show": "1"})
    second.refresh_from_db()
    assert second.last_rating == 1  # Again

    page = learner_client.get(REVIEW).content.decode()
    assert "Nothing is due right now." in page and "Done: 2 cards reviewed." in page


def test_review_session_serves_label_cards(learner_client, learner, chapter):
    equation = chapter.equations.get()
    y, w = equation.parts.all()
    card = ReviewCardFactory(user=learner, equation=equation)
    page = learner_client.get(REVIEW).content.decode()
    assert f'name="part-{y.pk}"' in page and f'name="part-{w.pk}"' in page
    bad = {f"part-{y.pk}": "output", f"part-{w.pk}": "input"}
    html = learner_client.post(f"{REVIEW}{card.pk}/", bad, **HTMX).content.decode()
    assert "✗ Not input.</strong> Try another role." in html and "Trained." not in html
    html = learner_client.post(f"{REVIEW}{card.pk}/", bad, **HTMX).content.decode()
    assert "✗ Not input: it is learned." in html and "Next card" in html
    card.refresh_from_db()
    assert card.last_rating == 1


def test_review_refuses_bad_input_with_a_message(learner_client, learner, outsider, chapter):
    q1, q2 = questions(chapter)
    mine = ReviewCardFactory(user=learner, question=q1)
    theirs = ReviewCardFactory(user=outsider, question=q1)
    not_due = ReviewCardFactory(user=learner, question=q2)
    ReviewCard.objects.filter(pk=not_due.pk).update(due=not_due.due + timedelta(days=2))
    cases = [
        (theirs.pk, {"choice": right(q1).pk}, 404, "That card is not in your review."),
        (999999, {"choice": right(q1).pk}, 404, "That card is not in your review."),
        (not_due.pk, {"choice": right(q2).pk}, 409, "That card is not due yet: it comes back on"),
        (mine.pk, {}, 400, "Pick an answer first, or press “Show me”."),
        (mine.pk, {"choice": "garbage"}, 400, "That answer is not one of this question"),
        (mine.pk, {"choice": right(q2).pk}, 400, "That answer is not one of this question"),
    ]
    for card_id, data, status, message in cases:
        for extra in ({}, HTMX):
            response = learner_client.post(f"{REVIEW}{card_id}/", data, **extra)
            assert (response.status_code, card_id) == (status, card_id)
            assert message in response.content.decode()
    assert QuizAttempt.objects.count() == 0
    assert learner_client.get(f"{REVIEW}{mine.pk}/").status_code == 405


def test_review_is_empty_for_a_reader_who_has_done_nothing(client):
    page = client.get(REVIEW).content.decode()
    assert "Nothing is due right now." in page and "Cards appear here once you answer" in page
    assert "sessionid" not in client.cookies  # reading the page creates no session


def _count(client, url: str) -> int:
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("url", [REVIEW, "/courses/dashboard/"])
def test_review_and_dashboard_queries_do_not_grow_with_cards(learner_client, learner, url):
    def build(n: int) -> None:
        chapter = ChapterFactory()
        for i in range(n):
            question = QuestionFactory(chapter=chapter, order=i)
            ReviewCardFactory(user=learner, question=question)
            QuizAttempt.objects.create(
                user=learner, question=question, choice=wrong(question), correct=False, rating=1
            )
            equation = EquationFactory(chapter=chapter, widget="")
            EquationPartFactory(equation=equation)
            ReviewCardFactory(user=learner, equation=equation)

    build(1)
    small = _count(learner_client, url)
    ReviewCard.objects.all().delete()
    build(50)
    page = learner_client.get(url).content.decode()
    assert (
        ("Card 1 of 100" in page)
        if url == REVIEW
        else ('<strong class="review-count">100</strong> due now' in page)
    )
    assert _count(learner_client, url) == small


# --- anonymous learners ----------------------------------------------------------------------


def test_anonymous_cards_move_into_the_account_at_login(client, learner, password, chapter):
    q1, q2 = questions(chapter)
    client.post(urls(chapter)["check"], {f"q{q1.pk}": wrong(q1).pk, "only": q1.pk})
    client.post(urls(chapter)["check"], {f"q{q2.pk}": right(q2).pk, "only": q2.pk})
    anon_key = client.session[ANON_KEY]
    assert ReviewCard.objects.filter(anon_key=anon_key).count() == 2
    # The account already has a card for Q2, reviewed earlier: the later one (anonymous) wins.
    old = ReviewCardFactory(
        user=learner, question=q2, last_reviewed_at=datetime(2025, 1, 1, tzinfo=UTC)
    )
    page = client.get(REVIEW).content.decode()
    assert "Card 1 of 1" in page  # the open round of Q1 is due for its retry
    assert "✗ Not quite.</strong> 4 is wrong." in page  # with the pick that opened it

    response = client.post(reverse("account_login"), {"login": learner.email, "password": password})
    assert response.status_code == 302
    cards = ReviewCard.objects.filter(user=learner).order_by("question__order")
    assert [c.question for c in cards] == [q1, q2]
    assert not ReviewCard.objects.filter(pk=old.pk).exists()
    assert ReviewCard.objects.filter(user__isnull=True).count() == 0
    assert cards[0].tries == 1  # the open round came along
    assert "Card 1 of 1" in client.get(REVIEW).content.decode()


# --- reminder emails -------------------------------------------------------------------------


def test_reminder_opt_in_on_the_account_page(learner_client, learner):
    page = learner_client.get(reverse("account")).content.decode()
    assert 'action="/review/reminders/"' in page and 'id="review-reminders"' in page
    response = learner_client.post(reverse("review:reminders"), {"enabled": "1"})
    assert response.status_code == 302 and response["Location"] == reverse("account")
    assert ReviewReminder.objects.get(user=learner).enabled
    page = learner_client.get(reverse("account")).content.decode()
    assert 'id="review-reminders" name="enabled" value="1" checked' in page
    learner_client.post(reverse("review:reminders"), {})
    assert not ReviewReminder.objects.get(user=learner).enabled


def test_reminders_go_daily_to_learners_with_due_cards(learner, outsider, chapter, settings):
    settings.SITE_URL = "https://fromscratch.example"
    q1, q2 = questions(chapter)
    ReviewReminder.objects.create(user=learner, enabled=True)
    ReviewReminder.objects.create(user=outsider, enabled=False)
    ReviewCardFactory(user=learner, question=q1, due=T0 - timedelta(hours=1))
    ReviewCardFactory(user=learner, question=q2, due=T0 + timedelta(hours=5))  # later today
    ReviewCardFactory(user=outsider, question=q1, due=T0)

    assert services.send_review_reminders(now=T0) == 1
    [message] = mail.outbox
    assert message.to == [learner.email]
    assert message.subject == "2 cards to review today · From Scratch"
    assert "https://fromscratch.example/review/\n" in message.body
    off = f"https://fromscratch.example/review/reminders/off/{reminder_token(learner)}/"
    assert off in message.body
    assert message.extra_headers["List-Unsubscribe"] == f"<{off}>"
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    # Once a day at most; the next day again while cards are due; never with nothing due.
    assert services.send_review_reminders(now=T0 + timedelta(hours=3)) == 0
    assert services.send_review_reminders(now=T0 + timedelta(days=1)) == 1
    ReviewCard.objects.filter(user=learner).update(due=T0 + timedelta(days=30))
    assert services.send_review_reminders(now=T0 + timedelta(days=2)) == 0
    ReviewReminder.objects.filter(user=learner).update(enabled=False)
    ReviewCard.objects.filter(user=learner).update(due=T0)
    assert services.send_review_reminders(now=T0 + timedelta(days=3)) == 0
    assert len(mail.outbox) == 2


def test_reminder_task_sends_through_the_service(learner, chapter):
    q1, _ = questions(chapter)
    ReviewReminder.objects.create(user=learner, enabled=True)
    ReviewCardFactory(user=learner, question=q1)
    assert tasks.send_review_reminders() == 1
    assert len(mail.outbox) == 1
    assert tasks.send_review_reminders() == 0  # already mailed today


@pytest.mark.worker
def test_beat_task_name_runs_on_a_real_worker(shared_worker, learner):
    """The task beat is told to run (by name, as django-celery-beat does) exists on a worker."""
    from django_celery_beat.models import PeriodicTask

    from courses.schedule import ensure_periodic_tasks
    from platform.celery import app
    from tests.support.waiting import wait_until

    ensure_periodic_tasks()  # a transactional test before this one may have flushed it
    chapter = ChapterFactory()
    ReviewReminder.objects.create(user=learner, enabled=True)
    ReviewCardFactory(user=learner, question=QuestionFactory(chapter=chapter))
    task = PeriodicTask.objects.get(task="courses.tasks.send_review_reminders")
    app.send_task(task.task)

    def sent() -> bool:
        return ReviewReminder.objects.get(user=learner).last_sent_at is not None

    wait_until(sent, timeout=60, interval=0.3, message=shared_worker.log)


def test_one_click_turn_off_without_cookies(learner):
    ReviewReminder.objects.create(user=learner, enabled=True)
    url = reverse("review:reminders_off", args=[reminder_token(learner)])
    anonymous = Client(enforce_csrf_checks=True)
    page = anonymous.get(url).content.decode()
    assert "Stop review reminders" in page
    response = anonymous.post(url, {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200 and "you will get no more review reminders" in (
        response.content.decode()
    )
    assert not ReviewReminder.objects.get(user=learner).enabled
    for bad in ["garbage", reminder_token(learner)[:-2] + "xx"]:
        response = anonymous.post(reverse("review:reminders_off", args=[bad]))
        assert response.status_code == 400 and "This link is not valid." in (
            response.content.decode()
        )


def test_reminder_schedule_is_in_beat_once():
    from django_celery_beat.models import PeriodicTask

    from courses.schedule import REMINDER_TASK_NAME, ensure_periodic_tasks

    task = PeriodicTask.objects.get(name=REMINDER_TASK_NAME)  # made by the migration
    assert task.task == "courses.tasks.send_review_reminders"
    assert (task.crontab.hour, task.crontab.minute, str(task.crontab.timezone)) == ("7", "0", "UTC")
    assert ensure_periodic_tasks() == "schedule already there"


# --- the migration from the 1/3/7-day ladder -------------------------------------------------


def test_past_attempts_are_replayed_into_fsrs_cards(learner):
    import importlib

    from django.apps import apps

    migration = importlib.import_module(
        "courses.migrations.0010_review_cards_from_past_attempts_and_reminder_schedule"
    )
    chapter = ChapterFactory()
    question = QuestionFactory(chapter=chapter)
    part = EquationPartFactory(equation=EquationFactory(chapter=chapter, widget=""))
    QuizAttempt.objects.create(
        user=learner, question=question, choice=wrong(question), correct=False, created_at=T0
    )
    day2 = T0 + timedelta(days=2)
    QuizAttempt.objects.create(
        user=learner, question=question, choice=right(question), correct=True, created_at=day2
    )
    from courses.models import LabelAttempt

    LabelAttempt.objects.create(user=learner, part=part, role="input", correct=False, created_at=T0)
    migration.forwards(apps, None)

    scheduler = fsrs.Scheduler(enable_fuzzing=False)
    want, _ = scheduler.review_card(fsrs.Card(card_id=0, due=T0), fsrs.Rating.Again, T0)
    label_card = ReviewCard.objects.get(equation=part.equation)
    assert label_card.due == want.due
    want, _ = scheduler.review_card(want, fsrs.Rating.Good, day2)
    card = ReviewCard.objects.get(question=question)
    assert (card.due, card.reviews, card.last_rating) == (want.due, 2, 3)
    assert list(QuizAttempt.objects.values_list("rating", flat=True)) == [1, 3]


def test_review_page_links_from_the_dashboard(learner_client, learner, chapter):
    q1, _ = questions(chapter)
    ReviewCardFactory(user=learner, question=q1)
    html = learner_client.get(reverse("courses:dashboard")).content.decode()
    assert re.search(r'<a class="button" href="/review/">Review 1 card</a>', html)


# --- in a real browser -----------------------------------------------------------------------


def _travel(days: int) -> None:
    """Move the clock forward ``days`` for every learner: their whole history moves back."""
    shift = timedelta(days=days)
    for card in ReviewCard.objects.all():
        state = fsrs.Card.from_dict(card.fsrs_card)
        state.due -= shift
        if state.last_review is not None:
            state.last_review -= shift
        card.fsrs_card, card.due = state.to_dict(), state.due
        if card.last_reviewed_at is not None:
            card.last_reviewed_at -= shift
        card.save()
    for attempt in QuizAttempt.objects.all():
        attempt.created_at -= shift
        attempt.save(update_fields=["created_at"])


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_wrong_retry_pass_then_review_when_due_in_browser(page):
    chapter = ChapterFactory(title="Attention")
    question = QuestionFactory(chapter=chapter)
    good, bad = right(question), wrong(question)

    page.goto(chapter.get_absolute_url())
    assert "Answer the question correctly" in page.locator(".check-status").inner_text()
    page.locator(f"#choice-{bad.pk}").check()
    page.get_by_role("button", name="Check Q1").click()
    verdict = page.locator(f"#q-{question.pk} .verdict")
    verdict.wait_for()
    assert verdict.inner_text().startswith("✗ Not quite. 4 is wrong.")
    assert page.get_by_role("button", name="Show me").is_visible()
    page.locator(f"#choice-{good.pk}").check()
    page.get_by_role("button", name="Try Q1 again").click()
    page.locator(".done-count", has_text="1 / 1 done").wait_for()
    assert page.locator("#check .badge-ok", has_text="Check passed").count() == 1
    card = ReviewCard.objects.get()
    assert card.last_rating == 2  # right after a retry: Hard

    page.goto(REVIEW)
    assert "Nothing is due right now." in page.locator("#review").inner_text()

    _travel(days=2)  # a Hard new card comes back within the day; two days on, it is due
    before = fsrs.Card.from_dict(ReviewCard.objects.get().fsrs_card)
    page.goto("/courses/dashboard/")
    assert "1 due now" in page.locator(".review-counts").inner_text().replace("\n", " ")
    page.get_by_role("link", name="Review 1 card").click()
    assert page.locator("#review-progress-label").inner_text() == "Card 1 of 1"
    page.locator(f"#choice-{good.pk}").check()
    page.get_by_role("button", name="Check", exact=True).click()
    page.locator("#review .verdict.feedback-ok").wait_for()
    page.get_by_role("link", name="Next card").click()
    page.locator("#review", has_text="Done: 1 card reviewed.").wait_for()
    card.refresh_from_db()
    want, _ = fsrs.Scheduler(enable_fuzzing=False).review_card(
        before, fsrs.Rating.Good, card.last_reviewed_at
    )
    assert (card.last_rating, card.due) == (3, want.due)
    page.watch.assert_clean()

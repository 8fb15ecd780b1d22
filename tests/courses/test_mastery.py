"""Mastery: shuffled choices, retries and reveals, passed versus read, the dashboard's scores."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from courses.models import ChapterProgress, Choice, QuizAttempt, ReviewCard
from tests.support.chapters import urls

from .factories import ChapterFactory, QuestionFactory, right, wrong

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
AGAIN, HARD, GOOD = 1, 2, 3


def questions(chapter):
    return list(chapter.questions.prefetch_related("choices"))


def answer(client, chapter, question, choice, **extra):
    return client.post(
        urls(chapter)["check"], {f"q{question.pk}": choice.pk, "only": question.pk}, **extra
    )


def show_me(client, chapter, question, **extra):
    return client.post(urls(chapter)["check"], {"show": question.pk}, **extra)


def choice_order(html: str, question) -> list[int]:
    block = re.search(rf'<fieldset[^>]*id="q-{question.pk}".*?</fieldset>', html, re.S)
    assert block is not None
    return [int(pk) for pk in re.findall(r'id="choice-(\d+)"', block[0])]


def six_choice_question(chapter, order: int):
    question = QuestionFactory(chapter=chapter, order=order, choices=False)
    for i in range(6):
        Choice.objects.create(
            question=question, order=i, text=f"choice {i}", is_correct=i == 0, explanation="-"
        )
    return question


# --- shuffling ------------------------------------------------------------------------------


def test_choices_are_shuffled_per_learner_and_stable_across_reloads(
    client, learner, outsider, django_user_model
):
    chapter = ChapterFactory()
    qs = [six_choice_question(chapter, i) for i in range(5)]
    editor_order = [[c.pk for c in q.choices.order_by("order")] for q in qs]

    client.force_login(learner)
    first = client.get(chapter.get_absolute_url()).content.decode()
    again = client.get(chapter.get_absolute_url()).content.decode()
    mine = [choice_order(first, q) for q in qs]
    assert mine == [choice_order(again, q) for q in qs]  # a reload does not reshuffle
    assert all(sorted(order) == sorted(ed) for order, ed in zip(mine, editor_order, strict=True))
    assert mine != editor_order  # the right answer (editor's first) is not always first
    assert any(order[0] != ed[0] for order, ed in zip(mine, editor_order, strict=True))

    client.force_login(outsider)
    theirs = [choice_order(client.get(chapter.get_absolute_url()).content.decode(), q) for q in qs]
    assert theirs != mine  # each learner has their own order

    # Anonymous readers share one order (the cached public page), also shuffled, and their
    # first answer does not reorder what they are looking at.
    client.logout()
    public = client.get(chapter.get_absolute_url()).content.decode()
    shared = [choice_order(public, q) for q in qs]
    assert shared != editor_order
    response = answer(client, chapter, qs[0], wrong(qs[0]), **HTMX)
    assert [choice_order(response.content.decode(), q) for q in qs] == shared


def test_admin_keeps_the_editors_order_of_choices(editor_client):
    chapter = ChapterFactory()
    question = six_choice_question(chapter, 0)
    html = editor_client.get(
        reverse("admin:courses_question_change", args=[question.pk])
    ).content.decode()
    texts = re.findall(r'name="choices-\d+-text" value="choice (\d)"', html)
    assert texts == ["0", "1", "2", "3", "4", "5"]


# --- retry, reveal, "Show me" ---------------------------------------------------------------


def test_wrong_answer_shows_its_explanation_and_may_be_retried(learner_client, chapter):
    q1, _ = questions(chapter)
    html = answer(learner_client, chapter, q1, wrong(q1), **HTMX).content.decode()
    assert "✗ Not quite.</strong> 4 is wrong." in html
    assert "Try Q1 again" in html and f'name="show" value="{q1.pk}"' in html
    assert "The answer:" not in html and "2 is right." not in html  # not given away
    card = ReviewCard.objects.get(question=q1)
    assert card.tries == 1 and card.last_rating is None  # the round is open

    html = answer(learner_client, chapter, q1, right(q1), **HTMX).content.decode()
    assert "✓ Right.</strong> 2 is right." in html and "1 / 2 done" in html
    card.refresh_from_db()
    assert (card.tries, card.last_rating) == (0, HARD)  # right after a retry
    assert list(QuizAttempt.objects.values_list("correct", "rating")) == [
        (False, None),
        (True, HARD),
    ]


def test_right_first_time_rates_good(learner_client, chapter):
    _, q2 = questions(chapter)
    answer(learner_client, chapter, q2, right(q2))
    assert ReviewCard.objects.get(question=q2).last_rating == GOOD


def test_second_wrong_try_reveals_the_answer(learner_client, chapter):
    q1, _ = questions(chapter)
    answer(learner_client, chapter, q1, wrong(q1), **HTMX)
    html = answer(learner_client, chapter, q1, wrong(q1), **HTMX).content.decode()
    assert "<strong>The answer:</strong> 2. 2 is right." in html
    assert 'class="is-answer"' in html
    assert 'in <a href="/review/">your review</a>' in html
    card = ReviewCard.objects.get(question=q1)
    assert (card.tries, card.last_rating) == (0, AGAIN)
    assert "0 / 2 done" in html  # a revealed answer does not count
    # It may not be answered again until FSRS brings it back (1 minute for a new card).
    response = answer(learner_client, chapter, q1, right(q1), **HTMX)
    assert response.status_code == 409
    assert "The answer to question 1 was shown; try it again from" in response.content.decode()
    assert QuizAttempt.objects.filter(correct=True).count() == 0


def test_show_me_reveals_and_rates_again(learner_client, chapter):
    q1, _ = questions(chapter)
    answer(learner_client, chapter, q1, wrong(q1), **HTMX)
    html = show_me(learner_client, chapter, q1, **HTMX).content.decode()
    assert "<strong>The answer:</strong> 2." in html
    attempt = QuizAttempt.objects.latest("id")
    assert (attempt.choice, attempt.correct, attempt.rating, attempt.revealed) == (
        None,
        False,
        AGAIN,
        True,
    )
    # "Show me" without a wrong try first works too (a fresh question).
    _, q2 = questions(chapter)
    assert (
        "<strong>The answer:</strong> 2." in show_me(learner_client, chapter, q2).content.decode()
    )


def test_show_me_of_a_foreign_question_is_refused(learner_client, chapter):
    other = QuestionFactory()
    response = show_me(learner_client, chapter, other, **HTMX)
    assert response.status_code == 400
    assert "That question is not part of this chapter&#x27;s check." in response.content.decode()


def test_revealed_state_survives_a_reload(learner_client, chapter):
    q1, _ = questions(chapter)
    show_me(learner_client, chapter, q1)
    html = learner_client.get(urls(chapter)["page"]).content.decode()
    block = re.search(rf'<fieldset[^>]*id="q-{q1.pk}".*?</fieldset>', html, re.S)
    assert block is not None and " disabled" in block[0].split(">")[0]
    assert "<strong>The answer:</strong> 2." in block[0]


# --- passed versus read ----------------------------------------------------------------------


def test_finished_without_passing_is_read_and_passing_makes_it_passed(learner_client, chapter):
    q1, q2 = questions(chapter)
    answer(learner_client, chapter, q1, right(q1))
    html = learner_client.post(urls(chapter)["finish"], {"finished": "1"}, **HTMX).content.decode()
    assert "It counts as <strong>read</strong>, not passed" in html and "(1 / 2 so far)" in html
    progress = ChapterProgress.objects.get()
    assert progress.finished_at is not None and progress.status == "read"
    course = learner_client.get(chapter.course.get_absolute_url()).content.decode()
    assert "0 of 1 chapter passed" in course and 'mark-read"' in course
    courses = learner_client.get(reverse("courses:index")).content.decode()
    assert "0 of 1 chapter passed" in courses

    answer(learner_client, chapter, q2, right(q2))
    progress.refresh_from_db()
    assert progress.status == "passed"
    course = learner_client.get(chapter.course.get_absolute_url()).content.decode()
    assert "1 of 1 chapter passed" in course and 'mark-passed"' in course


def test_chapter_without_questions_is_passed_when_finished(learner_client):
    chapter = ChapterFactory()
    learner_client.post(urls(chapter)["finish"], {"finished": "1"})
    course = learner_client.get(chapter.course.get_absolute_url()).content.decode()
    assert "1 of 1 chapter passed" in course


def test_check_status_counts_questions_in_words(learner_client, chapter):
    assert (
        "Answer all 2 questions correctly"
        in learner_client.get(urls(chapter)["page"]).content.decode()
    )
    one = ChapterFactory()
    QuestionFactory(chapter=one)
    html = learner_client.get(one.get_absolute_url()).content.decode()
    assert "Answer the question correctly to pass the chapter" in html
    assert "Answer all 1 questions" not in html


def test_verdict_is_not_said_twice(learner_client, chapter):
    q1, _ = questions(chapter)
    right(q1).__class__.objects.filter(pk=right(q1).pk).update(
        explanation="Right: two times two is four."
    )
    html = answer(learner_client, chapter, q1, right(q1), **HTMX).content.decode()
    assert "✓ Right.</strong> Two times two is four." in html
    assert "Right: two" not in html and "Right. Right" not in html


# --- the dashboard --------------------------------------------------------------------------


def test_dashboard_shows_each_chapters_state_score_and_last_answer(learner_client, chapter):
    q1, _ = questions(chapter)
    answer(learner_client, chapter, q1, right(q1))
    attempt = QuizAttempt.objects.get()
    learner_client.post(urls(chapter)["finish"], {"finished": "1"})
    html = learner_client.get(reverse("courses:dashboard")).content.decode()
    row = re.search(r'<tr class="chapter-item mark-read">(.*?)</tr>', html, re.S)
    assert row is not None
    assert '<td class="chapter-state">read</td>' in row[1]
    assert '<td class="chapter-score"><span class="cell-label">score </span>1 / 2</td>' in row[1]
    assert f"{attempt.created_at:%-d %b %Y}</time>" in row[1]
    assert "0 of 1 passed" in html
    assert '<strong class="review-count">0</strong> due now' in html  # Good: back in minutes
    nav = re.search(r'<nav class="site-nav".*?</nav>', html, re.S)
    assert nav is not None
    assert 'href="/courses/dashboard/" aria-current="page"' in nav[0]
    assert 'href="/courses/" aria-current' not in nav[0]

"""Pages run a number of SQL queries that does not grow with the content (1 row vs 50)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from courses.models import Course, Walkthrough

from .factories import build_course

pytestmark = pytest.mark.django_db


def count_queries(client, url: str) -> int:
    assert client.get(url).status_code == 200  # warm up: first-visit rows, caches
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


def reset() -> None:
    Walkthrough.objects.all().delete()
    Course.objects.all().delete()


@pytest.mark.parametrize("signed_in", [False, True])
def test_chapter_page_queries_do_not_grow(client, learner, django_assert_num_queries, signed_in):
    if signed_in:
        client.force_login(learner)
    user = learner if signed_in else None
    small = build_course(1, user=user)
    expected = count_queries(client, small.get_absolute_url())
    reset()
    big = build_course(50, user=user)
    page = client.get(big.get_absolute_url()).content.decode()
    assert page.count('class="question') == 50 and page.count('<li class="label-part') == 100
    with django_assert_num_queries(expected):
        client.get(big.get_absolute_url())


def test_dashboard_queries_do_not_grow(learner_client, learner, django_assert_num_queries):
    url = reverse("courses:dashboard")
    build_course(1, user=learner)
    expected = count_queries(learner_client, url)
    reset()
    build_course(50, user=learner)
    page = learner_client.get(url).content.decode()
    assert page.count('class="chapter-item') == 50
    assert '<strong class="review-count">100</strong> due now' in page  # questions and labels
    assert (
        page.count('<td class="chapter-score"><span class="cell-label">score </span>0 / 50</td>')
        == 1
    )
    assert page.count("?walkthrough=") == 20  # the 20 most recent
    with django_assert_num_queries(expected):
        learner_client.get(url)


@pytest.mark.parametrize("page", ["index", "course"])
def test_course_pages_queries_do_not_grow(learner_client, learner, django_assert_num_queries, page):
    def url(chapter) -> str:
        return chapter.course.get_absolute_url() if page == "course" else reverse("courses:index")

    expected = count_queries(learner_client, url(build_course(1, user=learner)))
    reset()
    big = build_course(50, user=learner)
    for _ in range(49):
        build_course(1)  # 50 courses on the list
    with django_assert_num_queries(expected):
        learner_client.get(url(big))


def test_home_course_list_queries_do_not_grow(client, django_assert_num_queries):
    build_course(1)
    expected = count_queries(client, reverse("home"))
    for _ in range(49):
        build_course(2)
    with django_assert_num_queries(expected):
        client.get(reverse("home"))


@pytest.mark.parametrize("signed_in", [False, True])
def test_chapter_page_queries_do_not_grow_on_cache_miss(
    client, learner, django_assert_num_queries, signed_in
):
    from django.core.cache import cache

    if signed_in:
        client.force_login(learner)
    user = learner if signed_in else None
    small = build_course(1, user=user)
    client.get(small.get_absolute_url())  # first visit writes its progress row
    cache.clear()
    expected = count_queries_uncached(client, small.get_absolute_url())
    reset()
    big = build_course(50, user=user)
    client.get(big.get_absolute_url())
    cache.clear()
    with django_assert_num_queries(expected):
        client.get(big.get_absolute_url())


def count_queries_uncached(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("page", ["chapter", "dashboard"])
def test_signed_in_queries_do_not_grow_with_the_learners_history(
    learner_client, learner, django_assert_num_queries, page
):
    """Uncached, the learner's chapter page and dashboard read the same number of queries with
    1 answer as with 500."""
    from django.core.cache import cache

    from courses.models import QuizAttempt

    chapter = build_course(2, user=learner)
    url = chapter.get_absolute_url() if page == "chapter" else reverse("courses:dashboard")
    questions = list(chapter.questions.prefetch_related("choices"))

    def answers(n: int) -> None:
        QuizAttempt.objects.filter(user=learner).delete()
        QuizAttempt.objects.bulk_create(
            QuizAttempt(
                user=learner,
                question=questions[i % len(questions)],
                choice=list(questions[i % len(questions)].choices.all())[i % 2],
                correct=False,
            )
            for i in range(n)
        )
        cache.clear()

    learner_client.get(url)  # the first visit writes its progress row
    answers(1)
    expected = count_queries_uncached(learner_client, url)
    answers(500)
    with django_assert_num_queries(expected):
        learner_client.get(url)

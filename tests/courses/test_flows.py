"""Learners answering, labelling and finishing through the test client, signed in or not."""

from __future__ import annotations

import re

import pytest
from allauth.account.models import EmailAddress, EmailConfirmationHMAC
from django.urls import reverse

from courses import page_cache
from courses.learners import ANON_KEY
from courses.models import ChapterProgress, LabelAttempt, QuizAttempt
from tests.support.chapters import urls
from tests.support.mathml import without_tex_source

from .factories import right, wrong

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def questions(chapter):
    return list(chapter.questions.prefetch_related("choices"))


def answer(client, chapter, question, choice, **extra):
    data = {f"q{question.pk}": choice.pk, "only": question.pk}
    return client.post(urls(chapter)["check"], data, **extra)


def test_check_one_question_htmx_returns_fragment_with_verdict(learner_client, learner, chapter):
    q1, _q2 = questions(chapter)
    response = answer(learner_client, chapter, q1, wrong(q1), **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert 'id="check"' in html
    assert "Not quite." in html
    assert "4 is wrong." in html  # the chosen choice's own explanation
    assert (
        "2 \\times 2" not in without_tex_source(html) and "<math" in html
    )  # the question's explanation, typeset
    assert "0 / 2 done" in html
    attempt = QuizAttempt.objects.get()
    assert (attempt.user, attempt.question, attempt.correct) == (learner, q1, False)


def test_check_passes_once_every_question_answered_right(learner_client, learner, chapter):
    q1, q2 = questions(chapter)
    answer(learner_client, chapter, q1, wrong(q1), **HTMX)
    response = answer(learner_client, chapter, q1, right(q1), **HTMX)
    assert "1 / 2 done" in response.content.decode()
    assert ChapterProgress.objects.get(user=learner).check_passed_at is None
    response = answer(learner_client, chapter, q2, right(q2), **HTMX)
    assert "2 / 2 done" in response.content.decode()
    assert "Check passed" in response.content.decode()
    passed_at = ChapterProgress.objects.get(user=learner).check_passed_at
    assert passed_at is not None
    # A question answered right is not answered again on the page (it comes back in review):
    # 409 with the reason, nothing saved, and the first pass time stays.
    response = answer(learner_client, chapter, q2, wrong(q2), **HTMX)
    assert response.status_code == 409
    assert "Question 2 is already answered right" in response.content.decode()
    assert QuizAttempt.objects.filter(user=learner).count() == 3
    assert ChapterProgress.objects.get(user=learner).check_passed_at == passed_at


def test_check_all_grades_every_answered_question(learner_client, learner, chapter):
    q1, q2 = questions(chapter)
    data = {f"q{q1.pk}": right(q1).pk, f"q{q2.pk}": wrong(q2).pk}
    response = learner_client.post(urls(chapter)["check"], data, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count("Right.") == 1 and html.count("Not quite.") == 1
    assert "1 / 2 done" in html
    assert QuizAttempt.objects.filter(user=learner).count() == 2


def test_check_without_javascript_returns_whole_page(learner_client, chapter):
    q1, _ = questions(chapter)
    response = answer(learner_client, chapter, q1, right(q1))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html and "Right." in html and "1 / 2 done" in html
    assert 'id="finish"' in html


def test_label_parts_returns_feedback_per_part(learner_client, learner, chapter):
    y, w = chapter.equations.get().parts.all()
    data = {f"part-{y.pk}": "output", f"part-{w.pk}": "input"}
    response = learner_client.post(urls(chapter)["label"], data, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert "✓ Right, output." in html
    # A first wrong try does not give the role away; the second one does.
    assert "✗ Not input.</strong> Try another role." in html and "Trained." not in html
    assert "1 / 2 parts right." in html
    again = learner_client.post(urls(chapter)["label"], data, **HTMX).content.decode()
    assert "✗ Not input: it is learned." in again and "Trained." in again
    assert sorted(LabelAttempt.objects.values_list("part__latex", "role", "correct")) == [
        ("W", "input", False),
        ("W", "input", False),
        ("y", "output", True),
        ("y", "output", True),
    ]
    assert LabelAttempt.objects.filter(user=learner).count() == 4


def test_label_parts_keeps_every_attempt(learner_client, chapter):
    y, w = chapter.equations.get().parts.all()
    for role in ("input", "learned"):
        learner_client.post(
            urls(chapter)["label"], {f"part-{y.pk}": "output", f"part-{w.pk}": role}
        )
    assert LabelAttempt.objects.count() == 4
    assert LabelAttempt.objects.filter(correct=True).count() == 3


def test_finish_marks_chapter_and_shows_it_on_dashboard(learner_client, learner, chapter):
    response = learner_client.post(urls(chapter)["finish"], {"finished": "1"}, **HTMX)
    assert response.status_code == 200
    assert "Marked finished on" in response.content.decode()
    assert ChapterProgress.objects.get(user=learner).finished_at is not None
    # Finished without passing the check: "read", never passed.
    assert "It counts as <strong>read</strong>, not passed" in response.content.decode()
    dashboard = learner_client.get(reverse("courses:dashboard")).content.decode()
    assert "0 of 1 passed" in dashboard
    assert '<td class="chapter-state">read</td>' in dashboard
    course_page = learner_client.get(chapter.course.get_absolute_url()).content.decode()
    assert "0 of 1 chapter passed" in course_page
    assert 'class="chapter-item mark-read"' in course_page
    learner_client.post(urls(chapter)["finish"], {"finished": "0"})
    assert ChapterProgress.objects.get(user=learner).finished_at is None


def test_anonymous_learner_progress_lives_in_session(client, chapter):
    q1, _ = questions(chapter)
    assert client.get(urls(chapter)["page"]).status_code == 200
    assert ANON_KEY not in client.session  # reading creates nothing
    response = answer(client, chapter, q1, right(q1), **HTMX)
    assert "1 / 2 done" in response.content.decode()
    key = client.session[ANON_KEY]
    attempt = QuizAttempt.objects.get()
    assert (attempt.user, attempt.anon_key) == (None, key)
    assert "1 / 2 done" in client.get(urls(chapter)["page"]).content.decode()
    dashboard = client.get(reverse("courses:dashboard")).content.decode()
    assert "kept in this browser only" in dashboard
    assert "Answered right" in dashboard


def _sign_up_and_log_in(client, email: str, password: str) -> None:
    response = client.post(
        reverse("account_signup"), {"email": email, "password1": password, "password2": password}
    )
    assert response.status_code == 302
    address = EmailAddress.objects.get(email=email)
    key = EmailConfirmationHMAC(address).key
    assert client.post(reverse("account_confirm_email", args=[key])).status_code == 302
    response = client.post(reverse("account_login"), {"login": email, "password": password})
    assert response.status_code == 302
    assert "_auth_user_id" in client.session


def test_anonymous_progress_merges_into_new_account_once(client, chapter, password):
    q1, _q2 = questions(chapter)
    answer(client, chapter, q1, wrong(q1))
    answer(client, chapter, q1, right(q1))
    y, w = chapter.equations.get().parts.all()
    client.post(urls(chapter)["label"], {f"part-{y.pk}": "output", f"part-{w.pk}": "learned"})
    client.post(urls(chapter)["finish"], {"finished": "1"})

    _sign_up_and_log_in(client, "new@example.com", password)

    from courses.models import ChapterProgress as Progress

    user_attempts = QuizAttempt.objects.filter(user__email="new@example.com")
    assert user_attempts.count() == 2  # moved, not copied
    assert QuizAttempt.objects.count() == 2
    assert LabelAttempt.objects.filter(user__email="new@example.com").count() == 2
    progress = Progress.objects.get()
    assert progress.user.email == "new@example.com" and progress.finished_at is not None
    assert ANON_KEY not in client.session
    page = client.get(urls(chapter)["page"]).content.decode()
    assert "1 / 2 done" in page
    # Logging out and in again moves nothing a second time.
    client.post(reverse("account_logout"))
    client.post(reverse("account_login"), {"login": "new@example.com", "password": password})
    assert QuizAttempt.objects.count() == 2
    assert Progress.objects.count() == 1


def test_merge_combines_with_existing_account_progress(client, learner, chapter, password):
    """Half the check answered while signed in, half anonymously: logging in passes it."""
    q1, q2 = questions(chapter)
    client.force_login(learner)
    answer(client, chapter, q1, right(q1))
    client.post(reverse("account_logout"))
    answer(client, chapter, q2, right(q2))
    client.post(urls(chapter)["finish"], {"finished": "1"})
    assert ChapterProgress.objects.count() == 2
    response = client.post(reverse("account_login"), {"login": learner.email, "password": password})
    assert response.status_code == 302
    progress = ChapterProgress.objects.get()
    assert progress.user == learner
    assert progress.check_passed_at is not None and progress.finished_at is not None
    assert QuizAttempt.objects.filter(user=learner).count() == 2
    assert "2 / 2 done" in client.get(urls(chapter)["page"]).content.decode()


def test_chapter_page_shows_every_section_in_order(client, chapter):
    from .factories import ChapterSymbolFactory, CodeListingFactory

    ChapterSymbolFactory(chapter=chapter)
    CodeListingFactory(chapter=chapter, filename="demo.py")
    other = type(chapter).objects.create(
        course=chapter.course,
        slug="next-one",
        title="Next one",
        order=chapter.order + 1,
        published=True,
    )
    chapter.related_chapters.add(other)
    html = client.get(urls(chapter)["page"]).content.decode()
    # The table of contents names the sections too (tests/courses/test_toc.py); look past it.
    html = re.sub(r'<details class="chapter-toc".*?</details>', "", html, count=1, flags=re.S)
    markers = [
        "min</span>",
        "Symbols in this lesson",
        "The idea",
        "Try it: label the parts",
        "The math",
        "The code",
        "demo.py",
        "It prints:",
        "You’ll see this in",
        "Check yourself",
        "0 / 2 done",
        "Finished this chapter?",
        'rel="next"',
        'class="chapter-newsletter',
    ]
    positions = [html.index(marker) for marker in markers]
    assert positions == sorted(positions)
    assert 'id="footer-newsletter"' not in html  # the box is shown once, in the chapter


def test_listing_download_is_an_attachment(client, chapter):
    from .factories import CodeListingFactory

    listing = CodeListingFactory(chapter=chapter, filename="mm7.py", source="print('hi')\n")
    url = reverse("courses:listing", args=[chapter.course.slug, chapter.slug, listing.pk])
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="mm7.py"'
    assert response.content == b"print('hi')\n"


def test_reloading_a_chapter_does_not_write_the_visit_again(learner_client, learner, chapter):
    from datetime import timedelta

    from django.core.cache import cache
    from django.utils import timezone

    from courses.models import ChapterProgress
    from courses.services import VISIT_RESOLUTION

    learner_client.get(chapter.get_absolute_url())
    first = ChapterProgress.objects.get(user=learner, chapter=chapter).last_visited_at
    assert first is not None
    learner_client.get(chapter.get_absolute_url())  # a reload a moment later writes nothing
    assert ChapterProgress.objects.get(user=learner, chapter=chapter).last_visited_at == first
    earlier = timezone.now() - VISIT_RESOLUTION - timedelta(seconds=1)
    ChapterProgress.objects.filter(user=learner).update(last_visited_at=earlier)
    cache.clear()  # five minutes on, the cached page's note of the visit has aged out too
    learner_client.get(chapter.get_absolute_url())  # a visit after a pause is recorded
    assert ChapterProgress.objects.get(user=learner, chapter=chapter).last_visited_at > first


# --- a signed-in learner's page, cached whole ----------------------------------------------


def test_signed_in_reload_is_served_whole_from_the_cache(
    learner_client, chapter, django_assert_num_queries
):
    learner_client.get(chapter.get_absolute_url())  # a first visit writes the progress row
    first = learner_client.get(chapter.get_absolute_url())
    assert first.status_code == 200
    # The session and the user (which carries learning_rev): nothing about the chapter.
    with django_assert_num_queries(2):
        again = learner_client.get(chapter.get_absolute_url())

    def main(response) -> str:  # the page without its per-response CSRF tokens
        body = response.content.decode().split("<main")[1]
        return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", body)

    assert main(again) == main(first)
    assert "csrfmiddlewaretoken" in again.content.decode()
    assert page_cache.CSRF_PLACEHOLDER not in again.content.decode()


def test_signed_in_cached_page_follows_an_answer_and_labels(learner_client, learner, chapter):
    url = chapter.get_absolute_url()
    learner_client.get(url)
    page = learner_client.get(url).content.decode()  # from the cache
    assert "0 / 2 done" in page and "labels checked" not in page
    q1, _q2 = questions(chapter)
    answer(learner_client, chapter, q1, right(q1), **HTMX)
    assert "1 / 2 done" in learner_client.get(url).content.decode()
    equation = chapter.equations.first()
    parts = list(equation.parts.all())
    label_url = reverse("courses:label", args=[chapter.course.slug, chapter.slug, equation.pk])
    learner_client.post(label_url, {f"part-{p.pk}": p.role for p in parts}, **HTMX)  # bulk write
    page = learner_client.get(url).content.decode()
    assert "labels checked" in page or f"1 / {chapter.equations.count()} labelled" in page
    learner_client.post(urls(chapter)["finish"], {"finished": "1"}, **HTMX)
    assert "Marked finished on" in learner_client.get(url).content.decode()


def test_signed_in_page_with_a_message_to_show_is_not_taken_from_the_cache(
    learner_client, learner, chapter
):
    from django.contrib.messages import constants
    from django.contrib.messages.storage.cookie import CookieStorage
    from django.http import HttpResponse
    from django.test import RequestFactory

    url = chapter.get_absolute_url()
    learner_client.get(url)  # cached now
    storage = CookieStorage(RequestFactory().get(url))
    storage.add(constants.SUCCESS, "You are logged in.")
    response = HttpResponse()
    storage.update(response)
    learner_client.cookies["messages"] = response.cookies["messages"].value
    assert "You are logged in." in learner_client.get(url).content.decode()


def test_learner_page_holds_until_a_revealed_answer_falls_due():
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    due = now + timedelta(minutes=10)
    state = page_cache.LearnerState(
        signed_in=True,
        done=frozenset(),
        progress=None,
        questions={1: page_cache.QuestionState("revealed", None, due)},
    )
    assert page_cache.learner_page_until(state, now) == due.timestamp()
    plain = page_cache.LearnerState(signed_in=True, done=frozenset(), progress=None)
    assert page_cache.learner_page_until(plain, now) == now.timestamp() + page_cache.BODY_TTL


def test_signed_in_dashboard_is_cached_and_follows_answers_and_content(
    learner_client, chapter, django_assert_num_queries
):
    url = reverse("courses:dashboard")
    learner_client.get(url)
    # The session, the user and one aggregate over the chapters: nothing else.
    with django_assert_num_queries(3):
        assert learner_client.get(url).status_code == 200
    q1, _q2 = questions(chapter)
    answer(learner_client, chapter, q1, right(q1), **HTMX)
    assert "Answered right" in learner_client.get(url).content.decode()
    chapter.title = "Attention, renamed"
    chapter.save()
    assert "Attention, renamed" in learner_client.get(url).content.decode()

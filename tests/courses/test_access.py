"""Bad input and access: refused with a 4xx message, nothing changed; learners kept apart."""

from __future__ import annotations

import pytest
from django.urls import reverse

from courses.models import ChapterProgress, LabelAttempt, QuizAttempt
from tests.support.chapters import urls

from .factories import (
    ChapterFactory,
    EquationFactory,
    EquationPartFactory,
    QuestionFactory,
    right,
    wrong,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def nothing_saved() -> bool:
    return (
        QuizAttempt.objects.count() == 0
        and LabelAttempt.objects.count() == 0
        and ChapterProgress.objects.count() == 0
    )


@pytest.mark.parametrize("htmx", [True, False])
def test_check_choice_from_another_question_is_refused(learner_client, chapter, htmx):
    q1, q2 = chapter.questions.all()
    extra = HTMX if htmx else {}
    data = {f"q{q1.pk}": right(q2).pk, "only": q1.pk}
    response = learner_client.post(urls(chapter)["check"], data, **extra)
    assert response.status_code == 400
    html = response.content.decode()
    assert "That answer is not one of question 1&#x27;s choices." in html
    assert ("<html" in html) is not htmx
    assert nothing_saved()


def test_check_question_from_another_chapter_is_refused(learner_client, chapter):
    foreign = QuestionFactory(chapter=ChapterFactory(course=chapter.course))
    data = {f"q{foreign.pk}": right(foreign).pk}
    response = learner_client.post(urls(chapter)["check"], data, **HTMX)
    assert response.status_code == 400
    assert "questions that are not in this chapter" in response.content.decode()
    assert nothing_saved()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Pick an answer to at least one question first."),
        ({"only": "QID"}, "Pick an answer to question 1 first."),
        ({"QKEY": "abc"}, "That answer is not one of question 1&#x27;s choices."),
        ({"QKEY": "999999"}, "That answer is not one of question 1&#x27;s choices."),
        ({"only": "nope"}, "That question is not part of this chapter&#x27;s check."),
    ],
)
def test_check_missing_or_malformed_fields_are_refused(learner_client, chapter, data, message):
    q1 = chapter.questions.first()
    data = {
        (f"q{q1.pk}" if k == "QKEY" else k): (str(q1.pk) if v == "QID" else v)
        for k, v in data.items()
    }
    response = learner_client.post(urls(chapter)["check"], data, **HTMX)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert nothing_saved()


def test_label_part_from_another_equation_is_refused(learner_client, chapter):
    y, w = chapter.equations.get().parts.all()
    foreign = EquationPartFactory(equation=EquationFactory(chapter=chapter))
    data = {f"part-{y.pk}": "output", f"part-{w.pk}": "learned", f"part-{foreign.pk}": "output"}
    response = learner_client.post(urls(chapter)["label"], data, **HTMX)
    assert response.status_code == 400
    assert "Some roles are for parts that are not in this equation." in response.content.decode()
    assert nothing_saved()


@pytest.mark.parametrize(
    ("roles", "message"),
    [
        ({"y": "output"}, "Choose a role for part 2."),
        ({"y": "output", "W": "wizard"}, "Part 2: pick one of output, input, learned"),
        ({}, "Choose a role for part 1."),
    ],
)
def test_label_missing_or_malformed_roles_are_refused(learner_client, chapter, roles, message):
    parts = {p.latex: p for p in chapter.equations.get().parts.all()}
    data = {f"part-{parts[latex].pk}": role for latex, role in roles.items()}
    response = learner_client.post(urls(chapter)["label"], data, **HTMX)
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert 'id="label-' in html  # the form comes back, with what was picked
    assert nothing_saved()


def test_label_equation_of_another_chapter_is_404(learner_client, chapter):
    other = EquationFactory(chapter=ChapterFactory(course=chapter.course))
    part = EquationPartFactory(equation=other)
    url = reverse("courses:label", args=[chapter.course.slug, chapter.slug, other.pk])
    response = learner_client.post(url, {f"part-{part.pk}": "output"}, **HTMX)
    assert response.status_code == 404
    assert "That equation is not in this chapter." in response.content.decode()
    assert nothing_saved()


@pytest.mark.parametrize("finished", [None, "maybe"])
def test_finish_malformed_is_refused(learner_client, chapter, finished):
    data = {} if finished is None else {"finished": finished}
    response = learner_client.post(urls(chapter)["finish"], data, **HTMX)
    assert response.status_code == 400
    assert "Say whether the chapter is finished." in response.content.decode()
    assert nothing_saved()


@pytest.mark.parametrize("kind", ["check", "label", "finish"])
def test_posts_to_unpublished_chapter_are_refused_even_for_staff(editor_client, chapter, kind):
    chapter.published = False
    chapter.save()
    q1 = chapter.questions.first()
    y, w = chapter.equations.get().parts.all()
    data = {
        "check": {f"q{q1.pk}": right(q1).pk},
        "label": {f"part-{y.pk}": "output", f"part-{w.pk}": "learned"},
        "finish": {"finished": "1"},
    }[kind]
    response = editor_client.post(urls(chapter)[kind], data, **HTMX)
    assert response.status_code == 404
    html = response.content.decode()
    assert "This chapter is not published, so nothing can be saved for it." in html
    assert "<html" not in html
    assert nothing_saved()


def test_unpublished_chapter_is_previewed_by_staff_only(client, learner, editor, chapter):
    chapter.published = False
    chapter.save()
    url = urls(chapter)["page"]
    assert client.get(url).status_code == 404
    client.force_login(learner)
    assert client.get(url).status_code == 404
    client.force_login(editor)
    response = client.get(url)
    assert response.status_code == 200
    assert "This chapter is not published" in response.content.decode()
    assert ChapterProgress.objects.count() == 0  # a preview is not a visit


def test_unpublished_course_hides_its_chapters(client, chapter):
    chapter.course.published = False
    chapter.course.save()
    assert client.get(urls(chapter)["page"]).status_code == 404
    assert client.get(chapter.course.get_absolute_url()).status_code == 404
    assert chapter.course.title not in client.get(reverse("courses:index")).content.decode()


def test_learner_never_sees_another_learners_progress(client, learner, outsider, chapter):
    q1, q2 = chapter.questions.all()
    client.force_login(outsider)
    client.post(urls(chapter)["check"], {f"q{q1.pk}": right(q1).pk, f"q{q2.pk}": wrong(q2).pk})
    client.post(urls(chapter)["finish"], {"finished": "1"})
    client.force_login(learner)
    page = client.get(urls(chapter)["page"]).content.decode()
    assert "0 / 2 done" in page and "Marked finished" not in page
    dashboard = client.get(reverse("courses:dashboard")).content.decode()
    assert "0 of 1 passed" in dashboard
    assert "No activity yet." in dashboard and "Nothing to review right now." in dashboard
    # The learner's own finish touches only their row.
    client.post(urls(chapter)["finish"], {"finished": "1"})
    assert ChapterProgress.objects.filter(user=outsider).count() == 1
    assert ChapterProgress.objects.filter(user=learner).count() == 1


def test_anonymous_session_cannot_claim_another_session_key(client, chapter):
    """The anonymous key comes from the session only; a posted one is ignored."""
    q1 = chapter.questions.first()
    client.post(urls(chapter)["check"], {f"q{q1.pk}": right(q1).pk, "anon_key": "a" * 32})
    attempt = QuizAttempt.objects.get()
    assert attempt.anon_key != "a" * 32 and len(attempt.anon_key) == 32


def test_get_on_post_urls_is_405(client, chapter):
    assert client.get(urls(chapter)["check"]).status_code == 405
    assert client.get(urls(chapter)["finish"]).status_code == 405

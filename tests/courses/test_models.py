"""Models and QuerySets: publication, learners' rows, reading time."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.utils import timezone

from courses.learners import Learner
from courses.models import (
    Chapter,
    ChapterProgress,
    Course,
    QuizAttempt,
)

from .factories import (
    ChapterFactory,
    CodeListingFactory,
    CourseFactory,
    EquationFactory,
    QuestionFactory,
    right,
)

pytestmark = pytest.mark.django_db


def test_chapter_published_needs_chapter_and_course_published():
    shown = ChapterFactory()
    ChapterFactory(published=False)
    ChapterFactory(course=CourseFactory(published=False))
    assert list(Chapter.objects.published()) == [shown]


def test_chapter_visible_to_staff_includes_drafts(learner, editor):
    shown = ChapterFactory()
    draft = ChapterFactory(published=False)
    assert list(Chapter.objects.visible_to(learner)) == [shown]
    assert set(Chapter.objects.visible_to(editor)) == {shown, draft}


def test_chapter_published_at_is_set_once():
    chapter = ChapterFactory(published=False)
    assert chapter.published_at is None
    chapter.published = True
    chapter.save()
    first = chapter.published_at
    assert first is not None
    chapter.published = False
    chapter.save()
    chapter.published = True
    chapter.save()
    chapter.refresh_from_db()
    assert chapter.published_at == first


def test_course_with_chapter_counts_counts_published_chapters():
    course = CourseFactory()
    ChapterFactory(course=course)
    ChapterFactory(course=course)
    ChapterFactory(course=course, published=False)
    assert Course.objects.with_chapter_counts().get(pk=course.pk).chapter_count == 2


def test_course_slug_dashboard_is_reserved():
    with pytest.raises(ValidationError):
        CourseFactory.build(slug="dashboard").full_clean()


def test_code_listing_filename_must_be_plain():
    with pytest.raises(ValidationError):
        CodeListingFactory.build(filename='../x".py', chapter=ChapterFactory()).full_clean()


def test_chapter_get_absolute_url():
    chapter = ChapterFactory(course=CourseFactory(slug="track"), slug="one")
    assert chapter.get_absolute_url() == "/courses/track/one/"


def test_reading_minutes_grows_with_text():
    chapter = ChapterFactory(idea="word " * 400, summary="", try_it_intro="")
    chapter = Chapter.objects.for_page().get(pk=chapter.pk)
    assert chapter.reading_minutes() == 2  # 400 words at 200 a minute
    EquationFactory(chapter=chapter, shape_note="")
    EquationFactory(chapter=chapter, shape_note="")
    QuestionFactory(chapter=chapter, prompt="Why?", explanation="Because.")
    chapter = Chapter.objects.for_page().get(pk=chapter.pk)
    # 400 words + the question's few words, two equations, one question: 2 + 2 + 0.5 → 5
    assert chapter.reading_minutes() == 5


def test_for_learner_keeps_learners_apart(learner, outsider):
    question = QuestionFactory()
    mine = QuizAttempt.objects.create(
        user=learner, question=question, choice=right(question), correct=True
    )
    QuizAttempt.objects.create(
        user=outsider, question=question, choice=right(question), correct=True
    )
    anon = QuizAttempt.objects.create(
        anon_key="a" * 32, question=question, choice=right(question), correct=True
    )
    assert list(QuizAttempt.objects.for_learner(Learner(user_id=learner.pk))) == [mine]
    assert list(QuizAttempt.objects.for_learner(Learner(anon_key="a" * 32))) == [anon]
    assert list(QuizAttempt.objects.for_learner(None)) == []


def test_learner_rows_need_exactly_one_owner(learner):
    question = QuestionFactory()
    with pytest.raises(IntegrityError):
        QuizAttempt.objects.create(
            user=learner, anon_key="b" * 32, question=question, choice=right(question), correct=1
        )


def test_chapter_progress_unique_per_learner_and_chapter(learner):
    chapter = ChapterFactory()
    ChapterProgress.objects.create(user=learner, chapter=chapter)
    with pytest.raises(IntegrityError):
        ChapterProgress.objects.create(user=learner, chapter=chapter)


def test_chapter_progress_unique_per_anonymous_key_and_chapter():
    chapter = ChapterFactory()
    ChapterProgress.objects.create(anon_key="c" * 32, chapter=chapter)
    with pytest.raises(IntegrityError):
        ChapterProgress.objects.create(anon_key="c" * 32, chapter=chapter)


def test_progress_queryset_finished_and_status_of_each_row(learner):
    now = timezone.now()
    a, b, c = ChapterFactory(), ChapterFactory(), ChapterFactory()
    QuestionFactory(chapter=a)
    ChapterProgress.objects.create(user=learner, chapter=a, finished_at=now)
    ChapterProgress.objects.create(user=learner, chapter=b, check_passed_at=now)
    ChapterProgress.objects.create(user=learner, chapter=c)
    mine = ChapterProgress.objects.for_learner(Learner(user_id=learner.pk))
    assert [p.chapter for p in mine.finished()] == [a]
    # Finished without the check is "read"; only a passed check passes.
    assert {p.chapter: p.status for p in mine} == {a: "read", b: "passed", c: "started"}
    assert {p.chapter for p in mine.passed()} == {b}

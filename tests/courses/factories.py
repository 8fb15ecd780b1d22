"""Factories for the courses app: content rows, and a course of any size for query counts."""

from __future__ import annotations

import factory
from django.utils import timezone

from courses.models import (
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
from courses.review import new_card_state


class CourseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Course

    title = factory.Sequence(lambda n: f"Course {n}")
    slug = factory.Sequence(lambda n: f"course-{n}")
    summary = "A course about $x^2$."
    published = True


class ChapterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Chapter
        skip_postgeneration_save = True

    course = factory.SubFactory(CourseFactory)
    title = factory.Sequence(lambda n: f"Chapter {n}")
    slug = factory.Sequence(lambda n: f"chapter-{n}")
    summary = "What this chapter is about."
    order = factory.Sequence(lambda n: n)
    published = True
    idea = "Softmax turns scores into weights: $\\operatorname{softmax}(z)_i$."
    try_it_intro = "Label the parts."


class SymbolFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Symbol

    name = factory.Sequence(lambda n: f"symbol {n}")
    slug = factory.Sequence(lambda n: f"symbol-{n}")
    glyph = "√"
    latex = "\\sqrt{x}"
    tokens = factory.LazyFunction(lambda: ["\\sqrt", "√"])
    explanation = "The square root, $\\sqrt{x}$."


class ChapterSymbolFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ChapterSymbol

    chapter = factory.SubFactory(ChapterFactory)
    symbol = factory.SubFactory(SymbolFactory)
    order = factory.Sequence(lambda n: n)


class EquationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Equation

    chapter = factory.SubFactory(ChapterFactory)
    order = factory.Sequence(lambda n: n)
    title = factory.Sequence(lambda n: f"Equation {n}")
    latex = "y = \\frac{x}{\\sqrt{d}}"
    shape_note = "$x$: $d$ features."


class EquationPartFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EquationPart

    equation = factory.SubFactory(EquationFactory)
    order = factory.Sequence(lambda n: n)
    latex = "y"
    role = EquationPart.Role.OUTPUT
    reason = "It is what comes out."


class CodeListingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CodeListing

    chapter = factory.SubFactory(ChapterFactory)
    order = factory.Sequence(lambda n: n)
    filename = factory.Sequence(lambda n: f"listing_{n}.py")
    source = "print(1 + 1)\n"
    expected_output = "2\n"


class QuestionFactory(factory.django.DjangoModelFactory):
    """A question with three choices; the first is the correct one."""

    class Meta:
        model = Question
        skip_postgeneration_save = True

    chapter = factory.SubFactory(ChapterFactory)
    order = factory.Sequence(lambda n: n)
    prompt = factory.Sequence(lambda n: f"Question {n}: what is $\\sqrt{{4}}$?")
    explanation = "Because $2 \\times 2 = 4$."

    @factory.post_generation
    def choices(obj, create, extracted, **kwargs):
        if not create or extracted is False:
            return
        for order, (text, correct) in enumerate([("2", True), ("4", False), ("16", False)]):
            Choice.objects.create(
                question=obj,
                order=order,
                text=text,
                is_correct=correct,
                explanation=f"{text} is {'right' if correct else 'wrong'}.",
            )


class ReviewCardFactory(factory.django.DjangoModelFactory):
    """A learner's card (give ``user`` or ``anon_key``, and ``question`` or ``equation``), new
    and due at ``due``."""

    class Meta:
        model = ReviewCard

    due = factory.LazyFunction(timezone.now)
    fsrs_card = factory.LazyAttribute(lambda card: new_card_state(card.due))


def right(question: Question) -> Choice:
    return next(c for c in question.choices.all() if c.is_correct)


def wrong(question: Question) -> Choice:
    return next(c for c in question.choices.all() if not c.is_correct)


def build_course(n: int, *, user=None) -> Chapter:
    """A course of ``n`` chapters; the last one has ``n`` of everything a chapter page shows.

    With ``user``, that learner has attempts on every question and part, progress in every
    chapter, a due review card for every question and equation and ``n`` saved walkthroughs:
    every list on the dashboard has ``n`` rows. Returns the big chapter.
    """
    course = CourseFactory()
    chapters = [ChapterFactory(course=course, order=i) for i in range(n)]
    chapter = chapters[-1]
    chapter.prerequisites.set(chapters[:-1] or [])
    chapter.related_chapters.set(chapters[:-1] or [])
    for i in range(n):
        ChapterSymbolFactory(chapter=chapter, symbol=SymbolFactory(), order=i)
        equation = EquationFactory(chapter=chapter, order=i, widget="")
        EquationPartFactory(equation=equation, role="output")
        EquationPartFactory(equation=equation, latex="x", role="input")
        CodeListingFactory(chapter=chapter, order=i)
        QuestionFactory(chapter=chapter, order=i)
    if user is not None:
        now = timezone.now()
        for question in Question.objects.filter(chapter=chapter).prefetch_related("choices"):
            QuizAttempt.objects.create(
                user=user, question=question, choice=wrong(question), correct=False, rating=1
            )
            ReviewCardFactory(user=user, question=question, due=now)
        for equation in Equation.objects.filter(chapter=chapter):
            ReviewCardFactory(user=user, equation=equation, due=now)
        for part in EquationPart.objects.filter(equation__chapter=chapter):
            LabelAttempt.objects.create(user=user, part=part, role="input", correct=False)
        for other in chapters:
            ChapterProgress.objects.create(
                user=user, chapter=other, finished_at=now, last_visited_at=now
            )
        for equation in Equation.objects.filter(chapter=chapter):
            Walkthrough.objects.create(
                user=user, equation=equation, latex=equation.latex, answers={"output": "y"}
            )
    return chapter

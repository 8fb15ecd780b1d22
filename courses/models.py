"""Courses: tracks of chapters built around equations, and what learners do with them.

Content (written by editors in admin): Course, Chapter, Symbol (the glossary), Equation with its
EquationParts, CodeListing, Question with Choices.

Learner records: QuizAttempt, LabelAttempt and ChapterProgress belong either to a user or, for
someone not signed in, to an anonymous key kept in their session (``courses.learners``); they
move to the account when that person logs in (``services.merge_anonymous_progress``).
Walkthrough holds a signed-in learner's answers to the "seven questions" about an equation.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import TYPE_CHECKING, Self

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Count, Prefetch, Q
from django.urls import reverse
from django.utils import timezone

from notebook.models import Note
from platform.models import Publishable, PublishableQuerySet
from platform.rendering import check_math_fields, latex_to_text, part_occurs

if TYPE_CHECKING:
    from courses.learners import Learner

# Reading time: prose at 200 words a minute, a displayed equation takes a minute to read
# properly, code at 8 lines a minute, a check question half a minute.
WORDS_PER_MINUTE = 200
MINUTES_PER_EQUATION = 1.0
CODE_LINES_PER_MINUTE = 8
MINUTES_PER_QUESTION = 0.5

RESERVED_COURSE_SLUGS = {"dashboard", "gallery"}
FILENAME_VALIDATOR = RegexValidator(
    r"^[\w.-]+\Z", "Use letters, digits, dots, dashes and underscores only."
)


# --- content --------------------------------------------------------------------------------


class CourseQuerySet(models.QuerySet):
    def published(self) -> CourseQuerySet:
        return self.filter(published=True)

    def with_chapter_counts(self) -> CourseQuerySet:
        """Annotate ``chapter_count``: the number of published chapters."""
        return self.annotate(
            chapter_count=Count("chapters", filter=Q(chapters__published=True), distinct=True)
        )


class Course(models.Model):
    """A track: an ordered run of chapters."""

    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    summary = models.TextField(blank=True, help_text="Markdown with $math$; shown on the list.")
    order = models.PositiveIntegerField(default=0, help_text="Lower numbers come first.")
    published = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CourseQuerySet.as_manager()

    class Meta:
        ordering = ["order", "title"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("courses:course", kwargs={"course_slug": self.slug})

    def clean(self) -> None:
        if self.slug in RESERVED_COURSE_SLUGS:
            raise ValidationError({"slug": f"“{self.slug}” is reserved for another page."})


class Symbol(models.Model):
    """A glossary entry: one piece of notation, how it looks, how it is typed, what it means."""

    class Kind(models.TextChoices):
        """What the notation stands for; the seven questions sort an equation's symbols by it."""

        QUANTITY = "quantity", "quantity (data or a computed value)"
        LEARNED = "learned", "learned (set by training)"
        CONSTANT = "constant", "constant or hyper-parameter (picked by hand)"
        OPERATION = "operation", "operation"
        NOTATION = "notation", "notation (an index, a typeface, a grouping)"

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    glyph = models.CharField(max_length=40, help_text="As it is shown, in Unicode: √, ᵀ, ε …")
    latex = models.CharField(max_length=200, blank=True, help_text="How it is typed in LaTeX.")
    tokens = models.JSONField(
        default=list,
        blank=True,
        help_text='LaTeX commands or Unicode characters that denote it, e.g. ["\\\\sqrt", "√"].',
    )
    explanation = models.TextField(help_text="Markdown with $math$.")
    kind = models.CharField(
        max_length=20,
        choices=Kind.choices,
        default=Kind.QUANTITY,
        help_text="How the seven questions treat it: an input, learned, a constant, an operation.",
    )
    extremes = models.CharField(
        max_length=200,
        blank=True,
        help_text="The seven questions' prompt for “what happens at the extremes”, "
        "e.g. “τ → 0: ?  τ → ∞: ?”. Leave empty when there is nothing to push.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.glyph} {self.name}"

    @property
    def is_input(self) -> bool:
        return self.kind == self.Kind.QUANTITY

    LATEX_FIELDS = ("latex",)
    MARKDOWN_FIELDS = ("explanation",)

    def clean(self) -> None:
        errors = check_math_fields(self, latex=self.LATEX_FIELDS, markdown=self.MARKDOWN_FIELDS)
        if not isinstance(self.tokens, list) or not all(isinstance(t, str) for t in self.tokens):
            errors["tokens"] = 'Give a list of strings, e.g. ["\\\\sqrt", "√"].'
        if errors:
            raise ValidationError(errors)


class ChapterQuerySet(PublishableQuerySet):
    def published(self) -> ChapterQuerySet:
        """Chapters learners may see: published, in a published course."""
        return self.filter(published=True, course__published=True)

    def visible_to(self, user) -> ChapterQuerySet:
        """Staff preview unpublished chapters; everyone else sees published ones only."""
        if user.is_authenticated and user.is_staff:
            return self.all()
        return self.published()

    def with_question_counts(self) -> ChapterQuerySet:
        """Annotate ``question_count``: the number of check questions."""
        return self.annotate(question_count=Count("questions", distinct=True))

    def for_page(self) -> ChapterQuerySet:
        """Everything the chapter page shows, in a number of queries that does not grow."""
        return self.select_related("course").prefetch_related(
            Prefetch("prerequisites", queryset=Chapter.objects.select_related("course")),
            Prefetch(
                "chapter_symbols",
                queryset=ChapterSymbol.objects.select_related("symbol").order_by("order", "id"),
            ),
            Prefetch("equations", queryset=Equation.objects.prefetch_related("parts")),
            "listings",
            Prefetch("related_chapters", queryset=Chapter.objects.select_related("course")),
            Prefetch("questions", queryset=Question.objects.prefetch_related("choices")),
            Prefetch(
                "related_notes",
                queryset=Note.objects.published(),
                to_attr="published_related_notes",
            ),
        )


class Chapter(Publishable):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="chapters")
    slug = models.SlugField(max_length=100)
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True, help_text="One or two sentences under the title.")
    order = models.PositiveIntegerField(default=0, help_text="Position in the course.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    prerequisites = models.ManyToManyField(
        "self", symmetrical=False, blank=True, related_name="required_by"
    )
    prerequisites_note = models.CharField(
        max_length=200,
        blank=True,
        help_text="Free-text prerequisites shown after the links, e.g. “The rest of the track”.",
    )
    idea = models.TextField("the idea", blank=True, help_text="Markdown with $math$.")
    try_it_intro = models.TextField(
        "try it (introduction)", blank=True, help_text="Shown above the label-the-parts exercise."
    )
    symbols = models.ManyToManyField(
        Symbol, through="ChapterSymbol", blank=True, related_name="chapters"
    )
    related_chapters = models.ManyToManyField(
        "self",
        symmetrical=False,
        blank=True,
        related_name="cited_by",
        verbose_name="you'll see this in (chapters)",
    )
    related_notes = models.ManyToManyField(
        "notebook.Note",
        blank=True,
        related_name="chapters",
        verbose_name="you'll see this in (notes)",
    )

    objects = ChapterQuerySet.as_manager()

    class Meta:
        ordering = ["course", "order", "id"]
        constraints = [
            models.UniqueConstraint(fields=["course", "slug"], name="chapter_slug_unique_in_course")
        ]

    LATEX_FIELDS: tuple[str, ...] = ()
    MARKDOWN_FIELDS = ("summary", "idea", "try_it_intro")

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse(
            "courses:chapter", kwargs={"course_slug": self.course.slug, "chapter_slug": self.slug}
        )

    def clean(self) -> None:
        super().clean()
        errors = check_math_fields(self, markdown=self.MARKDOWN_FIELDS)
        if errors:
            raise ValidationError(errors)

    @property
    def is_visible(self) -> bool:
        return self.published and self.course.published

    def reading_minutes(self) -> int:
        """Minutes to read the page, from its text (uses the prefetched related rows)."""
        prose = [self.summary, self.idea, self.try_it_intro]
        equations = list(self.equations.all())
        prose += [e.shape_note for e in equations] + [e.explanation for e in equations]
        questions = list(self.questions.all())
        for question in questions:
            prose += [question.prompt, question.explanation]
            for choice in question.choices.all():
                prose += [choice.text, choice.explanation]
        words = sum(len(_WORD.findall(_MATH.sub(" ", text or ""))) for text in prose)
        code_lines = sum(
            len([line for line in listing.source.splitlines() if line.strip()])
            for listing in self.listings.all()
        )
        minutes = (
            words / WORDS_PER_MINUTE
            + len(equations) * MINUTES_PER_EQUATION
            + code_lines / CODE_LINES_PER_MINUTE
            + len(questions) * MINUTES_PER_QUESTION
        )
        return max(1, math.ceil(minutes))


_WORD = re.compile(r"[\w’']+")
_MATH = re.compile(r"\$\$.+?\$\$|\$.+?\$", re.S)


class ChapterSymbol(models.Model):
    """A symbol shown in a chapter's "Symbols in this lesson" row, in order."""

    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="chapter_symbols")
    symbol = models.ForeignKey(Symbol, on_delete=models.CASCADE, related_name="+")
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["order", "id"]
        constraints = [
            models.UniqueConstraint(fields=["chapter", "symbol"], name="chapter_symbol_once")
        ]

    def __str__(self) -> str:
        return f"{self.symbol} in {self.chapter}"


# LaTeX commands that only lay a formula out; every other command's name is kept as a word.
_LAYOUT_COMMANDS = {
    "left", "right", "big", "Big", "bigg", "Bigg", "frac", "operatorname", "mathrm", "mathbf",
    "boldsymbol", "mathit", "mathbb", "mathcal", "text", "quad", "qquad", "begin", "end",
}  # fmt: skip


_SCRIPT = re.compile(r"([_^])\{([^{}]*)\}")


def _unwrap_script(match: re.Match) -> str:
    """``_{k}`` → ``_k``, ``^{\\top}`` → ``^\\top``, ``_{j=1}`` → ``_(j=1)``."""
    body = match[2].strip()
    if re.fullmatch(r"\\[A-Za-z]+|\w", body):
        return match[1] + body
    return f"{match[1]}({body})"


def readable_latex(latex: str) -> str:
    """A formula as search can read it: its plain-text rendering (``softmax((QKᵀ)/(√(d_k)))``),
    then on a second line the names of the commands in it (``sqrt``, ``epsilon``, ``top`` …),
    which is how a learner types a symbol they cannot type."""
    text = latex or ""
    for _ in range(4):  # sub- and superscripts first, so \frac's arguments hold no braces
        text = _SCRIPT.sub(_unwrap_script, text)
    names = dict.fromkeys(
        name for name in re.findall(r"\\([A-Za-z]+)", latex or "") if name not in _LAYOUT_COMMANDS
    )
    return "\n".join([latex_to_text(text), " ".join(names)]).strip()


class Equation(models.Model):
    class Widget(models.TextChoices):
        NONE = "", "none"
        ATTENTION = "attention", "attention heatmap"
        SOFTMAX = "softmax", "softmax with temperature"
        NORMS = "norms", "layer norm vs RMS norm"
        ADAM = "adam", "Adam trajectory"
        ROPE = "rope", "RoPE offsets"
        CROSS_ENTROPY = "cross-entropy", "cross-entropy and its gradient"
        MULTI_HEAD = "multi-head", "multi-head attention"
        ADAMW = "adamw", "Adam vs AdamW"

    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="equations")
    order = models.PositiveIntegerField(default=0)
    title = models.CharField(max_length=200)
    latex = models.TextField(help_text="LaTeX without surrounding dollars.")
    shape_note = models.CharField(
        max_length=300, blank=True, help_text="e.g. “Q, K: tokens × d_k”. Markdown with $math$."
    )
    explanation = models.TextField(blank=True, help_text="Optional markdown under the equation.")
    widget = models.CharField(max_length=20, choices=Widget.choices, blank=True, default="")
    readable_text = models.TextField(
        blank=True, editable=False, help_text="The LaTeX as readable text, for site search."
    )

    class Meta:
        ordering = ["order", "id"]

    LATEX_FIELDS = ("latex",)
    MARKDOWN_FIELDS = ("shape_note", "explanation")

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs) -> None:
        self.readable_text = readable_latex(self.latex)
        if kwargs.get("update_fields") is not None and "latex" in kwargs["update_fields"]:
            kwargs["update_fields"] = {*kwargs["update_fields"], "readable_text"}
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return self.chapter.get_absolute_url() + f"#eq-{self.pk}"

    def clean(self) -> None:
        errors = check_math_fields(self, latex=self.LATEX_FIELDS, markdown=self.MARKDOWN_FIELDS)
        if errors:
            raise ValidationError(errors)


class EquationPart(models.Model):
    class Role(models.TextChoices):
        OUTPUT = "output", "output"
        INPUT = "input", "input"
        LEARNED = "learned", "learned"
        CONSTANT = "constant", "constant"
        OPERATION = "operation", "operation"

    equation = models.ForeignKey(Equation, on_delete=models.CASCADE, related_name="parts")
    order = models.PositiveIntegerField(default=0)
    latex = models.CharField(max_length=300, help_text="The fragment, in LaTeX.")
    role = models.CharField(max_length=20, choices=Role.choices)
    reason = models.CharField(max_length=300, help_text="One line: why it has this role.")

    class Meta:
        ordering = ["order", "id"]

    LATEX_FIELDS = ("latex",)
    MARKDOWN_FIELDS = ("reason",)

    def __str__(self) -> str:
        return f"{self.latex} ({self.role})"

    def clean(self) -> None:
        errors = check_math_fields(self, latex=self.LATEX_FIELDS, markdown=self.MARKDOWN_FIELDS)
        try:
            equation: Equation | None = self.equation
        except Equation.DoesNotExist:
            equation = None
        if (
            "latex" not in errors
            and self.latex.strip()
            and equation is not None
            and not part_occurs(self.latex, equation.latex)
        ):
            errors["latex"] = (
                f"“{self.latex}” does not occur in its equation ({equation.latex}): a "
                "labelled part must be a piece of the equation as it is written."
            )
        if errors:
            raise ValidationError(errors)


# The seven questions of the tutor (courses.widgets.walkthrough), in the order it asks them.
SEVEN_QUESTIONS: list[tuple[str, str]] = [
    ("output", "What comes out?"),
    ("inputs", "What goes in?"),
    ("learned", "What is learned?"),
    ("shapes", "What shape is everything?"),
    ("operations", "What does each operation do?"),
    ("extremes", "What happens at the extremes?"),
    ("ablations", "What breaks without each part?"),
]


class EquationAnswer(models.Model):
    """An editor's model answer to one of the seven questions about one equation: what the
    tutor shows after the learner has answered that question themselves."""

    equation = models.ForeignKey(Equation, on_delete=models.CASCADE, related_name="answers")
    question = models.CharField(max_length=20, choices=SEVEN_QUESTIONS)
    text = models.TextField(help_text="The model answer. Markdown with $math$.")

    class Meta:
        ordering = ["equation", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["equation", "question"], name="equation_answer_once_per_question"
            )
        ]

    def __str__(self) -> str:
        return f"{self.equation}: {self.get_question_display()}"


class CodeListing(models.Model):
    class CheckStatus(models.TextChoices):
        """The verdict of the last sandboxed run (the sandbox's statuses), or none yet."""

        NOT_CHECKED = "", "not checked"
        PASSED = "passed", "passed"
        FAILED = "failed", "failed"
        ERROR = "error", "error"
        TIMED_OUT = "timed_out", "timed out"
        NOT_RUN = "not_run", "not run"
        UNAVAILABLE = "unavailable", "sandbox unavailable"

    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="listings")
    order = models.PositiveIntegerField(default=0)
    filename = models.CharField(
        max_length=100,
        validators=[FILENAME_VALIDATOR],
        help_text="The download's file name: letters, digits, dots, dashes, underscores.",
    )
    language = models.CharField(max_length=30, default="python")
    source = models.TextField()
    expected_output = models.TextField(blank=True, help_text="Exactly what the code prints.")
    # The last run of the listing in the snippet sandbox (services.check_listing).
    check_status = models.CharField(
        max_length=20, choices=CheckStatus.choices, blank=True, default="", editable=False
    )
    checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    check_detail = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["order", "id"]

    def __str__(self) -> str:
        return self.filename

    def save(self, *args, **kwargs) -> None:
        """A changed source or expected output makes the last check meaningless: forget it."""
        if self.pk is not None and self.checked_at is not None:
            before = (
                CodeListing.objects.filter(pk=self.pk)
                .values_list("source", "expected_output")
                .first()
            )
            if before is not None and before != (self.source, self.expected_output):
                self.check_status = self.CheckStatus.NOT_CHECKED
                self.checked_at, self.check_detail = None, ""
                if kwargs.get("update_fields") is not None:
                    kwargs["update_fields"] = {
                        *kwargs["update_fields"],
                        "check_status",
                        "checked_at",
                        "check_detail",
                    }
        super().save(*args, **kwargs)

    @property
    def check_passed(self) -> bool:
        return self.check_status == self.CheckStatus.PASSED

    @property
    def check_ran(self) -> bool:
        """Whether the last check ran the code at all (a refused or skipped run says nothing)."""
        S = self.CheckStatus
        return self.check_status in (S.PASSED, S.FAILED, S.ERROR, S.TIMED_OUT)


class Question(models.Model):
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="questions")
    order = models.PositiveIntegerField(default=0)
    prompt = models.TextField(help_text="Markdown with $math$.")
    explanation = models.TextField(
        help_text="Shown after any answer: the general explanation. Markdown with $math$."
    )

    class Meta:
        ordering = ["order", "id"]

    LATEX_FIELDS: tuple[str, ...] = ()
    MARKDOWN_FIELDS = ("prompt", "explanation")

    def __str__(self) -> str:
        return self.prompt[:80]

    def clean(self) -> None:
        errors = check_math_fields(self, markdown=self.MARKDOWN_FIELDS)
        if errors:
            raise ValidationError(errors)


class Choice(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="choices")
    order = models.PositiveIntegerField(default=0)
    text = models.CharField(max_length=300, help_text="Markdown with $math$, one line.")
    is_correct = models.BooleanField("correct", default=False)
    explanation = models.TextField(help_text="Why this choice is right or wrong.")

    class Meta:
        ordering = ["order", "id"]

    LATEX_FIELDS: tuple[str, ...] = ()
    MARKDOWN_FIELDS = ("text", "explanation")

    def __str__(self) -> str:
        return self.text

    def clean(self) -> None:
        errors = check_math_fields(self, markdown=self.MARKDOWN_FIELDS)
        if errors:
            raise ValidationError(errors)


# --- learner records ------------------------------------------------------------------------


class LearnerQuerySet(models.QuerySet):
    def for_learner(self, learner: Learner | None) -> Self:
        """Rows of this learner only (a user, or an anonymous session key); none for nobody."""
        if learner is None:
            return self.none()
        if learner.user_id is not None:
            return self.filter(user_id=learner.user_id)
        return self.filter(user__isnull=True, anon_key=learner.anon_key)


class LearnerOwned(models.Model):
    """Belongs to exactly one of: a user, or an anonymous session key."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    anon_key = models.CharField(max_length=32, blank=True, default="", db_index=True)

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=(Q(user__isnull=False) & Q(anon_key=""))
                | (Q(user__isnull=True) & ~Q(anon_key="")),
                name="%(class)s_one_owner",
            )
        ]


# FSRS ratings (fsrs.Rating values) an attempt's round can close with.
RATING_CHOICES = [(1, "again"), (2, "hard"), (3, "good"), (4, "easy")]


class QuizAttemptQuerySet(LearnerQuerySet):
    def correct(self) -> QuizAttemptQuerySet:
        return self.filter(correct=True)


class QuizAttempt(LearnerOwned):
    """One answer to one check question. Every attempt is kept."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="attempts")
    choice = models.ForeignKey(
        Choice,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="attempts",
        help_text="Empty when the learner asked to be shown the answer.",
    )
    correct = models.BooleanField()
    rating = models.PositiveSmallIntegerField(
        choices=RATING_CHOICES,
        null=True,
        blank=True,
        help_text="The review rating this attempt closed its round with; empty while the "
        "learner may still try again.",
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = QuizAttemptQuerySet.as_manager()

    class Meta(LearnerOwned.Meta):
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["user", "question"], name="quizattempt_user_question"),
        ]

    def __str__(self) -> str:
        if self.choice_id is None:
            return f"shown the answer: {self.question}"
        return f"{'right' if self.correct else 'wrong'}: {self.question}"

    @property
    def revealed(self) -> bool:
        """The learner asked to see the answer ("Show me") instead of picking a choice."""
        return self.choice_id is None


class LabelAttempt(LearnerOwned):
    """One role picked for one equation part. Every attempt is kept."""

    part = models.ForeignKey(EquationPart, on_delete=models.CASCADE, related_name="attempts")
    role = models.CharField(max_length=20, choices=EquationPart.Role.choices)
    correct = models.BooleanField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = LearnerQuerySet.as_manager()

    class Meta(LearnerOwned.Meta):
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.part.latex} as {self.role}"


class ChapterProgressQuerySet(LearnerQuerySet):
    def finished(self) -> ChapterProgressQuerySet:
        return self.filter(finished_at__isnull=False)

    def passed(self) -> ChapterProgressQuerySet:
        """Chapters passed: the check passed, or finished when the chapter has no questions."""
        return self.filter(
            Q(check_passed_at__isnull=False)
            | Q(finished_at__isnull=False, chapter__questions__isnull=True)
        )


class ChapterProgress(LearnerOwned):
    """Where one learner stands in one chapter."""

    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="progress")
    check_passed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    last_visited_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = ChapterProgressQuerySet.as_manager()

    class Meta(LearnerOwned.Meta):
        verbose_name_plural = "chapter progress"
        ordering = ["-updated_at"]
        constraints = [
            *LearnerOwned.Meta.constraints,
            models.UniqueConstraint(
                fields=["user", "chapter"],
                condition=Q(user__isnull=False),
                name="progress_once_per_user",
            ),
            models.UniqueConstraint(
                fields=["anon_key", "chapter"],
                condition=Q(user__isnull=True),
                name="progress_once_per_anon",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.chapter}: {self.status}"

    @property
    def status(self) -> str:
        """``passed`` (the check passed), ``read`` (marked finished, check not passed) or
        ``started``. A chapter without questions has no check: see ``chapter_state``."""
        if self.check_passed_at:
            return "passed"
        if self.finished_at:
            return "read"
        return "started"


def chapter_state(progress: ChapterProgress | None, *, question_count: int) -> str:
    """What a chapter shows for a learner: passed, read, started or not started.

    Passed means the check is passed; a chapter with no questions has nothing to pass, so
    marking it finished passes it. Finished without passing the check is "read", never passed.
    """
    if progress is None:
        return "not started"
    if question_count == 0 and progress.finished_at:
        return "passed"
    return progress.status


class ReviewCardQuerySet(LearnerQuerySet):
    def published(self) -> ReviewCardQuerySet:
        """Cards whose question or equation is in a published chapter of a published course."""
        return self.filter(
            Q(question__chapter__published=True, question__chapter__course__published=True)
            | Q(equation__chapter__published=True, equation__chapter__course__published=True)
        )

    def due(self, now: datetime) -> ReviewCardQuerySet:
        """Due at ``now``, or waiting for the retry of a round the learner left open."""
        return self.filter(Q(due__lte=now) | Q(tries__gt=0))

    def for_session(self) -> ReviewCardQuerySet:
        """With everything a review card shows, soonest first."""
        return self.select_related(
            "question__chapter__course", "equation__chapter__course"
        ).order_by("due", "id")


class ReviewCard(LearnerOwned):
    """One thing to remember, scheduled by FSRS: a check question or an equation's label set.

    ``fsrs_card`` is ``fsrs.Card.to_dict()``; ``due`` copies its due time so that queries can
    filter on it. A round is one go at the card: it ends with a right answer, a second wrong
    one or "Show me", and gives one rating (courses.review). While a round is open after a
    first wrong try, ``round_base`` keeps the state before it and ``fsrs_card`` holds the
    provisional "again", so a learner who walks away still gets the card back.
    """

    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, null=True, blank=True, related_name="cards"
    )
    equation = models.ForeignKey(
        Equation,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="cards",
        help_text="The card of this equation's label set (all its parts together).",
    )
    fsrs_card = models.JSONField()
    due = models.DateTimeField(db_index=True)
    tries = models.PositiveSmallIntegerField(
        default=0, help_text="Wrong tries in the open round (0: no round open)."
    )
    round_base = models.JSONField(null=True, blank=True)
    last_rating = models.PositiveSmallIntegerField(choices=RATING_CHOICES, null=True, blank=True)
    last_reviewed_at = models.DateTimeField(null=True, blank=True)
    reviews = models.PositiveIntegerField(default=0, help_text="Rounds closed so far.")

    objects = ReviewCardQuerySet.as_manager()

    class Meta(LearnerOwned.Meta):
        ordering = ["due", "id"]
        constraints = [
            *LearnerOwned.Meta.constraints,
            models.CheckConstraint(
                condition=(Q(question__isnull=False) & Q(equation__isnull=True))
                | (Q(question__isnull=True) & Q(equation__isnull=False)),
                name="reviewcard_question_or_equation",
            ),
            models.UniqueConstraint(
                fields=["user", "question"],
                condition=Q(user__isnull=False, question__isnull=False),
                name="card_once_per_user_question",
            ),
            models.UniqueConstraint(
                fields=["anon_key", "question"],
                condition=Q(user__isnull=True, question__isnull=False),
                name="card_once_per_anon_question",
            ),
            models.UniqueConstraint(
                fields=["user", "equation"],
                condition=Q(user__isnull=False, equation__isnull=False),
                name="card_once_per_user_equation",
            ),
            models.UniqueConstraint(
                fields=["anon_key", "equation"],
                condition=Q(user__isnull=True, equation__isnull=False),
                name="card_once_per_anon_equation",
            ),
        ]
        indexes = [models.Index(fields=["user", "due"], name="reviewcard_user_due")]

    def __str__(self) -> str:
        return f"{self.subject} (due {self.due:%Y-%m-%d %H:%M})"

    @property
    def subject(self) -> Question | Equation:
        subject = self.question if self.question_id is not None else self.equation
        assert subject is not None  # the check constraint
        return subject

    @property
    def chapter(self) -> Chapter:
        return self.subject.chapter

    def is_due(self, now: datetime) -> bool:
        return self.tries > 0 or self.due <= now


class ReviewReminder(models.Model):
    """A signed-in learner's choice to be mailed when review cards are due (opt-in)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_reminder"
    )
    enabled = models.BooleanField(default=False)
    last_sent_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"review reminders {'on' if self.enabled else 'off'} for user {self.user_id}"


class Walkthrough(models.Model):
    """A signed-in learner's answers to the seven questions about one equation."""

    ANSWER_KEYS = tuple(key for key, _question in SEVEN_QUESTIONS)

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="walkthroughs"
    )
    equation = models.ForeignKey(
        Equation, on_delete=models.SET_NULL, null=True, blank=True, related_name="walkthroughs"
    )
    latex = models.TextField()
    answers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.equation.title if self.equation else self.latex[:60]

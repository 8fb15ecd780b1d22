"""Admin for editors: courses, chapters with their equations, listings and questions.

Stock admin does not nest inlines, so the nesting is one level per page: a chapter edits its
symbols, equations, listings and questions inline, and each equation and question links to its
own page where its parts or choices are edited inline.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html

from platform.admin_preview import MathPreviewMixin
from platform.rendering import part_occurs

from . import tasks
from .models import (
    SEVEN_QUESTIONS,
    Chapter,
    ChapterSymbol,
    Choice,
    CodeListing,
    Course,
    Equation,
    EquationAnswer,
    EquationPart,
    Question,
    Symbol,
)

NO_CORRECT_CHOICE = (
    "Mark at least one choice as correct: otherwise nobody can ever pass this question."
)


class ChapterInline(admin.TabularInline):
    model = Chapter
    fields = ["order", "title", "slug", "published"]
    prepopulated_fields = {"slug": ["title"]}
    extra = 0
    show_change_link = True


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "order", "published", "updated_at"]
    list_editable = ["order", "published"]
    list_filter = ["published"]
    search_fields = ["title", "slug", "summary"]
    prepopulated_fields = {"slug": ["title"]}
    inlines = [ChapterInline]


class ChapterSymbolInline(admin.TabularInline):
    model = ChapterSymbol
    fields = ["order", "symbol"]
    autocomplete_fields = ["symbol"]
    extra = 0
    verbose_name = "symbol in this lesson"
    verbose_name_plural = "symbols in this lesson"


class ChapterEquationFormSet(forms.BaseInlineFormSet):
    """An equation's LaTeX edited on the chapter page must still contain its labelled parts
    (they are edited on the equation's own page)."""

    def clean(self) -> None:
        super().clean()
        for form in self.forms:
            equation = form.instance
            if equation.pk is None or "latex" not in form.changed_data or form.errors:
                continue
            latex = form.cleaned_data.get("latex", "")
            strays = [p.latex for p in equation.parts.all() if not part_occurs(p.latex, latex)]
            if strays:
                form.add_error(
                    "latex",
                    "These labelled parts would no longer occur in the equation: "
                    + ", ".join(strays)
                    + ". Change them on the equation's own page first (or keep them here).",
                )


class EquationInline(MathPreviewMixin, admin.StackedInline):
    model = Equation
    formset = ChapterEquationFormSet
    fields = [("order", "title", "widget"), "latex", "shape_note", "explanation"]
    extra = 0
    show_change_link = True
    verbose_name_plural = "equations (open one to label its parts)"


class CodeListingInline(admin.StackedInline):
    model = CodeListing
    fields = [("order", "filename", "language"), "source", "expected_output", "last_check"]
    readonly_fields = ["last_check"]

    @admin.display(description="last check")
    def last_check(self, obj: CodeListing) -> str:
        if obj.pk is None or obj.checked_at is None:
            return "Not checked yet: use the action “Check the code listings” on the list."
        status = obj.get_check_status_display()
        return f"{status} on {obj.checked_at:%Y-%m-%d %H:%M} UTC. {obj.check_detail}"

    extra = 0


class ChapterQuestionFormSet(forms.BaseInlineFormSet):
    """A chapter cannot be saved while one of its questions has no correct choice."""

    def clean(self) -> None:
        super().clean()
        problems = []
        for form in self.forms:
            question = form.instance
            if not form.cleaned_data or form.cleaned_data.get("DELETE") or question.pk is None:
                continue
            if not question.choices.filter(is_correct=True).exists():
                problems.append(f"“{question.prompt[:60]}”")
        if problems:
            raise ValidationError(
                "These questions have no correct choice: "
                + ", ".join(problems)
                + ". Open each one and mark a correct choice (or delete the question)."
            )


class QuestionInline(MathPreviewMixin, admin.StackedInline):
    model = Question
    formset = ChapterQuestionFormSet
    fields = ["order", "prompt", "explanation"]
    extra = 0
    show_change_link = True
    verbose_name_plural = "questions (open one to edit its choices; add new ones from Questions)"

    def has_add_permission(self, request, obj=None) -> bool:
        # A question added here would have no choices and so no correct one; questions are
        # added on their own page, where the choices are edited inline.
        return False


@admin.register(Chapter)
class ChapterAdmin(MathPreviewMixin, admin.ModelAdmin):
    list_display = ["title", "course", "order", "published", "published_at", "updated_at", "page"]
    list_display_links = ["title"]
    list_editable = ["order", "published"]
    list_filter = ["published", "course"]
    list_select_related = ["course"]
    search_fields = ["title", "slug", "summary", "idea"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["prerequisites", "related_chapters", "related_notes"]
    readonly_fields = ["published_at", "updated_at", "add_question"]
    fieldsets = [
        (None, {"fields": ["course", ("order", "published"), "title", "slug", "summary"]}),
        ("Before reading", {"fields": ["prerequisites", "prerequisites_note"]}),
        ("Text", {"fields": ["idea", "try_it_intro"]}),
        ("You'll see this in", {"fields": ["related_chapters", "related_notes"]}),
        ("Dates", {"fields": ["published_at", "updated_at", "add_question"]}),
    ]
    inlines = [ChapterSymbolInline, EquationInline, CodeListingInline, QuestionInline]
    actions = ["check_listings"]

    @admin.action(description="Check the code listings (run them and compare their output)")
    def check_listings(self, request, queryset) -> None:
        ids = list(CodeListing.objects.filter(chapter__in=queryset).values_list("pk", flat=True))
        for pk in ids:
            tasks.check_listing.delay_on_commit(pk)  # type: ignore[attr-defined]  # a DjangoTask
        self.message_user(request, f"{len(ids)} listing check(s) queued; results show on the page.")

    @admin.display(description="page")
    def page(self, obj: Chapter) -> str:
        label = "view" if obj.is_visible else "preview"
        return format_html('<a href="{}">{}</a>', obj.get_absolute_url(), label)

    @admin.display(description="new question")
    def add_question(self, obj: Chapter | None) -> str:
        if obj is None or obj.pk is None:
            return "Save the chapter first."
        url = reverse("admin:courses_question_add") + f"?chapter={obj.pk}"
        return format_html('<a href="{}">Add a question to this chapter</a>', url)


class EquationPartInline(MathPreviewMixin, admin.TabularInline):
    model = EquationPart
    fields = ["order", "latex", "role", "reason"]
    extra = 1


class EquationAnswerInline(admin.StackedInline):
    """The tutor's model answers: one per question; questions left out are assembled from the
    equation's parts, shape note and glossary."""

    model = EquationAnswer
    fields = ["question", "text"]
    extra = 0
    max_num = len(SEVEN_QUESTIONS)
    verbose_name = "model answer for the tutor"
    verbose_name_plural = "model answers for the tutor (the seven questions)"


@admin.register(Equation)
class EquationAdmin(MathPreviewMixin, admin.ModelAdmin):
    list_display = ["title", "chapter", "order", "widget", "part_count"]
    list_filter = ["widget", "chapter__course", "chapter"]
    list_select_related = ["chapter"]
    search_fields = ["title", "latex", "shape_note"]
    autocomplete_fields = ["chapter"]
    inlines = [EquationPartInline, EquationAnswerInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(part_count=Count("parts"))

    @admin.display(description="parts", ordering="part_count")
    def part_count(self, obj: Equation) -> int:
        return obj.part_count  # type: ignore[attr-defined]  # annotated by get_queryset


class ChoiceFormSet(forms.BaseInlineFormSet):
    """At least two choices, at least one of them correct."""

    def clean(self) -> None:
        super().clean()
        kept = [
            form.cleaned_data
            for form in self.forms
            if form.cleaned_data and not form.cleaned_data.get("DELETE")
        ]
        if len(kept) < 2:
            raise ValidationError("Give at least two choices.")
        if not any(data.get("is_correct") for data in kept):
            raise ValidationError(NO_CORRECT_CHOICE)


class ChoiceInline(MathPreviewMixin, admin.StackedInline):
    model = Choice
    formset = ChoiceFormSet
    fields = [("order", "is_correct"), "text", "explanation"]
    extra = 0

    def get_extra(self, request, obj=None, **kwargs) -> int:
        return 0 if obj is not None and obj.pk else 4


@admin.register(Question)
class QuestionAdmin(MathPreviewMixin, admin.ModelAdmin):
    list_display = ["__str__", "chapter", "order"]
    list_filter = ["chapter__course", "chapter"]
    list_select_related = ["chapter"]
    search_fields = ["prompt", "explanation", "choices__text"]
    autocomplete_fields = ["chapter"]
    fields = ["chapter", "order", "prompt", "explanation"]
    inlines = [ChoiceInline]


@admin.register(Symbol)
class SymbolAdmin(MathPreviewMixin, admin.ModelAdmin):
    list_display = ["glyph", "name", "slug", "latex", "kind"]
    list_display_links = ["glyph", "name"]
    list_filter = ["kind"]
    search_fields = ["name", "slug", "latex", "explanation"]
    prepopulated_fields = {"slug": ["name"]}

"""Editors write notes here: checks and corrections inline, runs read-only, edit history."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from platform.admin_preview import MathPreviewMixin

from . import tasks
from .models import Correction, Note, SnippetCheck, SnippetRun, Topic


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name", "description"]
    prepopulated_fields = {"slug": ["name"]}


class SnippetCheckInline(admin.StackedInline):
    model = SnippetCheck
    extra = 0
    fields = ["name", "code", "expected_output", "packages", "latest_result"]
    readonly_fields = ["latest_result"]
    show_change_link = True

    @admin.display(description="latest run")
    def latest_result(self, obj: SnippetCheck) -> str:
        run = obj.latest_run
        if run is None:
            return "Not run yet (a run is queued when you save new code)."
        url = reverse("admin:notebook_snippetrun_change", args=[run.pk])
        stale = " — code changed since; a run is queued" if obj.is_stale else ""
        return format_html(
            '<a href="{}">{}</a> on {:%Y-%m-%d %H:%M} UTC in {:.2f} s{}: {}',
            url,
            run.get_status_display(),
            run.started_at,
            run.duration,
            stale,
            run.detail,
        )


class CorrectionInline(MathPreviewMixin, admin.StackedInline):
    """Add a correction in the same step as the fix: fill the empty form below the note."""

    model = Correction
    extra = 1
    fields = ["date", "what_was_wrong", "what_changed"]
    verbose_name = "correction (a substantive fix, shown publicly with its date)"


class VerifiedFilter(admin.SimpleListFilter):
    title = "verified"
    parameter_name = "verified"

    def lookups(self, request, model_admin):
        return [("yes", "Verified"), ("no", "Not verified")]

    def queryset(self, request, queryset):
        verified = Note.objects.verified()
        if self.value() == "yes":
            return queryset.filter(pk__in=verified)
        if self.value() == "no":
            return queryset.exclude(pk__in=verified)
        return queryset


class CorrectedFilter(admin.SimpleListFilter):
    title = "corrected"
    parameter_name = "corrected"

    def lookups(self, request, model_admin):
        return [("yes", "Corrected"), ("no", "Never corrected")]

    def queryset(self, request, queryset):
        corrected = Note.objects.corrected()
        if self.value() == "yes":
            return queryset.filter(pk__in=corrected)
        if self.value() == "no":
            return queryset.exclude(pk__in=corrected)
        return queryset


@admin.register(Note)
class NoteAdmin(MathPreviewMixin, SimpleHistoryAdmin):
    list_display = ["title", "date", "kind", "published", "verified", "corrected", "view"]
    list_filter = ["kind", "topics", VerifiedFilter, CorrectedFilter, "published", "date"]
    search_fields = ["title", "summary", "body", "slug"]
    prepopulated_fields = {"slug": ["title"]}
    date_hierarchy = "date"
    filter_horizontal = ["topics"]
    inlines = [SnippetCheckInline, CorrectionInline]
    actions = ["run_snippet_checks"]
    readonly_fields = ["published_at", "updated_at", "run_history"]
    history_list_display = ["title", "summary"]
    # Long text changes are shown as a line diff instead of "whole old text → whole new text".
    object_history_list_template = "admin/notebook/note/object_history_list.html"

    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    fieldsets = [
        (None, {"fields": ["title", "slug", "date", "kind", "topics", "summary", "body"]}),
        ("Links", {"fields": ["written_up_in", "written_up_in_title", "part_of", "part_of_url"]}),
        ("Publishing", {"fields": ["published", "published_at", "updated_at"]}),
        ("Snippet check runs", {"fields": ["run_history"]}),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).with_marks()

    @admin.display(boolean=True)
    def verified(self, obj: Note) -> bool:
        return obj.is_verified

    @admin.display(boolean=True)
    def corrected(self, obj: Note) -> bool:
        return obj.is_corrected

    @admin.display(description="on site")
    def view(self, obj: Note) -> str:
        return format_html('<a href="{}">view</a>', obj.get_absolute_url())

    @admin.display(description="run history (latest 20)")
    def run_history(self, obj: Note) -> str:
        if obj.pk is None:
            return "—"
        runs = SnippetRun.objects.filter(snippet_check__note=obj).select_related("snippet_check")[
            :20
        ]
        if not runs:
            return "No runs yet."
        rows = format_html_join(
            "",
            '<tr><td>{:%Y-%m-%d %H:%M:%S}</td><td>{}</td><td><a href="{}">{}</a></td>'
            "<td>{:.2f} s</td><td>{}</td></tr>",
            (
                (
                    run.started_at,
                    run.snippet_check.name,
                    reverse("admin:notebook_snippetrun_change", args=[run.pk]),
                    run.get_status_display(),
                    run.duration,
                    run.detail,
                )
                for run in runs
            ),
        )
        return format_html(
            "<table><thead><tr><th>when (UTC)</th><th>check</th><th>status</th>"
            "<th>duration</th><th>detail</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    @admin.action(description="Run snippet checks (queued on the worker)")
    def run_snippet_checks(self, request: HttpRequest, queryset: QuerySet) -> None:
        ids = list(queryset.filter(checks__isnull=False).distinct().values_list("pk", flat=True))
        for pk in ids:
            tasks.run_note_checks.delay_on_commit(pk)  # type: ignore[attr-defined]  # a DjangoTask
        queued = len(ids)
        skipped = queryset.count() - queued
        msg = f"Queued snippet checks for {queued} note(s)."
        if skipped:
            msg += f" {skipped} note(s) have no checks."
        self.message_user(request, msg, messages.SUCCESS)


@admin.register(Correction)
class CorrectionAdmin(MathPreviewMixin, admin.ModelAdmin):
    list_display = ["note", "date", "what_was_wrong"]
    list_filter = ["date"]
    search_fields = ["note__title", "what_was_wrong", "what_changed"]
    autocomplete_fields = ["note"]


class SnippetRunInline(admin.TabularInline):
    model = SnippetRun
    extra = 0
    fields = ("started_at", "status", "duration", "detail")
    readonly_fields = fields
    ordering = ["-started_at"]
    show_change_link = True
    can_delete = False
    max_num = 0

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SnippetCheck)
class SnippetCheckAdmin(SimpleHistoryAdmin):
    list_display = ["name", "note", "status"]
    list_select_related = ["note", "latest_run"]
    search_fields = ["name", "note__title", "code"]
    autocomplete_fields = ["note"]
    inlines = [SnippetRunInline]

    @admin.display(description="latest run")
    def status(self, obj: SnippetCheck) -> str:
        return obj.latest_run.get_status_display() if obj.latest_run else "not run"


@admin.register(SnippetRun)
class SnippetRunAdmin(admin.ModelAdmin):
    """Runs are records of what happened: read-only."""

    list_display = ["snippet_check", "status", "started_at", "duration", "network_isolated"]
    list_filter = ["status", "started_at"]
    list_select_related = ["snippet_check__note"]
    search_fields = ["snippet_check__name", "snippet_check__note__title"]
    readonly_fields = [
        "snippet_check",
        "status",
        "started_at",
        "duration",
        "exit_code",
        "network_isolated",
        "code_hash",
        "detail",
        "output",
        "diff",
    ]
    fields = tuple(readonly_fields)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser

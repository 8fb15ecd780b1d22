"""Editors compose, test, schedule, send and watch issues here.

List pages stay fast with 100,000 subscribers: no per-row queries (related rows are joined),
no full-table count (``show_full_result_count = False``), and the progress of a send is one
aggregate query polled by htmx from a small fragment view.
"""

from __future__ import annotations

import smtplib

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from platform.http import AuthenticatedHttpRequest

from . import emails, tasks
from .models import BounceEvent, Delivery, Issue, Subscriber
from .services import composing, sending

FAILURES_SHOWN = 20
# The box's heading per status (the form's status field says the status itself).
PROGRESS_HEADINGS: dict[str, str] = {
    Issue.Status.SENDING: "Delivery in progress",
    Issue.Status.SENT: "Delivery finished",
    Issue.Status.FAILED: "Delivery failed: no message was accepted",
}


def subscribers_phrase(count: int) -> str:
    """ "1 confirmed subscriber", "2,000 confirmed subscribers"."""
    noun = ngettext("confirmed subscriber", "confirmed subscribers", count)
    return f"{count:,} {noun}"


def deliveries_phrase(count: int) -> str:
    return f"{count:,} " + ngettext("failed delivery", "failed deliveries", count)


class IssueForm(forms.ModelForm):
    class Meta:
        model = Issue
        fields = ["subject", "body", "status", "send_at"]
        widgets = {"body": forms.Textarea(attrs={"rows": 24, "cols": 90})}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if "status" in self.fields:
            self.fields["status"].choices = [  # type: ignore[attr-defined]  # a ChoiceField
                (Issue.Status.DRAFT, "draft"),
                (
                    Issue.Status.SCHEDULED,
                    "scheduled (sent by the weekly job once its time has come)",
                ),
            ]

    def clean(self):
        data = super().clean()
        assert data is not None  # ModelForm.clean returns cleaned_data
        if data.get("status") == Issue.Status.SCHEDULED and not data.get("send_at"):
            self.add_error("send_at", "A scheduled issue needs a send time.")
        return data


@admin.register(Issue)
class IssueAdmin(admin.ModelAdmin):
    form = IssueForm
    list_display = ["subject", "status", "send_at", "started_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["subject"]
    date_hierarchy = None
    show_full_result_count = False
    actions = ["send_now", "retry_failed", "send_test_to_me", "draft_next_issue"]
    change_form_template = "admin/newsletter/issue/change_form.html"
    change_list_template = "admin/newsletter/issue/change_list.html"

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and not obj.is_editable:
            return ["subject", "body", "live_status", "send_at", "started_at", "live_finished_at"]
        return ["started_at", "finished_at"]

    def get_fields(self, request, obj=None):
        if obj is not None and not obj.is_editable:
            # The two fields a send changes carry ids: the polled progress fragment updates
            # them out of band, so the form follows the box without a reload.
            return ["subject", "body", "live_status", "send_at", "started_at", "live_finished_at"]
        return ["subject", "body", "status", "send_at", "started_at", "finished_at"]

    @admin.display(description="status")
    def live_status(self, obj: Issue) -> str:
        return format_html('<span id="issue-status-value">{}</span>', obj.get_status_display())

    @admin.display(description="finished at")
    def live_finished_at(self, obj: Issue) -> str:
        return format_html('<span id="issue-finished-value">{}</span>', _when(obj.finished_at))

    def has_delete_permission(self, request, obj=None) -> bool:
        if obj is not None and obj.status == Issue.Status.SENDING:
            return False
        return super().has_delete_permission(request, obj)

    # --- extra pages ---------------------------------------------------------------------

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("draft-next/", wrap(self.draft_next_view), name="newsletter_issue_draft_next"),
            path("<int:pk>/preview/", wrap(self.preview_view), name="newsletter_issue_preview"),
            path("<int:pk>/progress/", wrap(self.progress_view), name="newsletter_issue_progress"),
            path(
                "<int:pk>/send-test/", wrap(self.send_test_view), name="newsletter_issue_send_test"
            ),
            path("<int:pk>/send-now/", wrap(self.send_now_view), name="newsletter_issue_send_now"),
            path("<int:pk>/retry/", wrap(self.retry_view), name="newsletter_issue_retry"),
            *super().get_urls(),
        ]

    def _issue(self, request: HttpRequest, pk: int, *, change: bool = False) -> Issue:
        issue = get_object_or_404(Issue, pk=pk)
        allowed = (
            self.has_change_permission(request, issue)
            if change
            else (self.has_view_permission(request, issue))
        )
        if not allowed:
            raise PermissionDenied
        return issue

    def _back(self, issue: Issue) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:newsletter_issue_change", args=[issue.pk]))

    def progress_context(self, issue: Issue) -> dict:
        counts = issue.delivery_counts()
        failures = list(
            issue.deliveries.failed()
            .select_related("subscriber")
            # issue_id too: the related manager reads it to attach the issue (else 1 query a row)
            .only("id", "issue_id", "attempts", "last_error", "subscriber__email")
            .order_by("id")[:FAILURES_SHOWN]
        )
        failures_url = (
            reverse("admin:newsletter_delivery_changelist")
            + f"?issue__id__exact={issue.pk}&status__exact=failed"
        )
        return {
            "issue": issue,
            "heading": PROGRESS_HEADINGS.get(str(issue.status), issue.get_status_display()),
            "finished_at": _when(issue.finished_at),
            "failed_phrase": deliveries_phrase(counts["failed"]),
            "can_retry": counts["failed"] > 0
            and issue.status in (Issue.Status.SENT, Issue.Status.FAILED),
            "counts": counts,
            "percent": round(100 * counts["done"] / counts["total"]) if counts["total"] else 100,
            "failures": failures,
            "failures_url": failures_url,
            "polling": issue.status == Issue.Status.SENDING,
        }

    @staticmethod
    def progress_html(request: HttpRequest, context: dict) -> str:
        return render_to_string("admin/newsletter/issue/_progress.html", context, request=request)

    @method_decorator(require_GET)
    def progress_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The box, plus the form's status and finish time swapped out of band (hx-swap-oob)."""
        issue = self._issue(request, pk)
        context = {**self.progress_context(issue), "out_of_band": True}
        return HttpResponse(self.progress_html(request, context))

    @method_decorator(require_GET)
    def preview_view(self, request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
        """The HTML part as the editor would receive it."""
        issue = self._issue(request, pk)
        reader = Subscriber.objects.for_email(request.user.email).first() or Subscriber(
            pk=0, email=request.user.email, user=request.user
        )
        mail = emails.IssueMail(issue)
        msg = mail.message(reader)
        if request.GET.get("part") == "text":
            return HttpResponse(msg.body, content_type="text/plain; charset=utf-8")
        body = str(msg.alternatives[0][0])
        # The equations travel as cid: parts; a browser shows them as data: URLs.
        for equation in mail.equations:
            body = body.replace(f"cid:{equation.cid}", equation.data_url)
        response = HttpResponse(body, content_type="text/html; charset=utf-8")
        # Email HTML styles itself inline; allow that on this admin-only page, nothing more.
        response._csp_update = {"style-src": ["'unsafe-inline'"]}  # type: ignore[attr-defined]
        return response

    @method_decorator(require_POST)
    def send_test_view(self, request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
        issue = self._issue(request, pk, change=True)
        self._send_test(request, issue)
        return self._back(issue)

    def _send_test(self, request: AuthenticatedHttpRequest, issue: Issue) -> None:
        try:
            composing.send_test(issue=issue, to_email=request.user.email)
        except (smtplib.SMTPException, OSError) as exc:
            self.message_user(request, f"The test could not be sent: {exc}", messages.ERROR)
        else:
            self.message_user(request, f"Test of “{issue}” sent to {request.user.email}.")

    def send_now_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """GET (or a POST without ``confirm``): the confirmation page — subject, how many will
        get it, from which address. POST with ``confirm``: the send starts. GET never sends."""
        issue = self._issue(request, pk, change=True)
        if request.method not in ("GET", "POST"):
            return HttpResponse(status=405, headers={"Allow": "GET, POST"})
        if not issue.is_editable:
            self.message_user(
                request, f"“{issue}” is {issue.status}; not sent again.", messages.WARNING
            )
            return self._back(issue)
        if request.method == "POST" and request.POST.get("confirm") == "send":
            self._send_now(request, issue)
            return self._back(issue)
        count = sending.recipient_count()
        context = {
            **self.admin_site.each_context(request),
            "title": "Send this issue now?",
            "opts": self.opts,
            "issue": issue,
            "original": issue,
            "recipients": count,
            "recipients_phrase": subscribers_phrase(count),
            "from_email": settings.NEWSLETTER_FROM_EMAIL,
            "site_url": settings.SITE_URL,
        }
        return TemplateResponse(request, "admin/newsletter/issue/send_confirm.html", context)

    def _send_now(self, request: HttpRequest, issue: Issue) -> None:
        count = sending.start_send(issue_id=issue.pk, queue_chunk=tasks.queue_chunk)
        self.message_user(request, f"Sending “{issue}” to {subscribers_phrase(count)}.")

    @method_decorator(require_POST)
    def retry_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        issue = self._issue(request, pk, change=True)
        count = sending.retry_failed(issue_id=issue.pk, queue_chunk=tasks.queue_chunk)
        self.message_user(request, f"{deliveries_phrase(count)} queued again.")
        return self._back(issue)

    @method_decorator(require_POST)
    def draft_next_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        issue = composing.draft_next_issue()
        self.message_user(
            request, f"Drafted “{issue}” from what was published since the last letter."
        )
        return self._back(issue)

    # --- actions on the list -------------------------------------------------------------

    @admin.action(
        description="Send the selected issue now (asks to confirm)", permissions=["change"]
    )
    def send_now(self, request, queryset) -> HttpResponse | None:
        """One issue: its confirmation page. A send is confirmed one issue at a time, with its
        recipient count, so several selected issues are refused with a message."""
        issues = list(queryset[:2])
        if len(issues) != 1:
            self.message_user(
                request,
                "Select one issue to send: each send is confirmed on its own page.",
                messages.WARNING,
            )
            return None
        return HttpResponseRedirect(reverse("admin:newsletter_issue_send_now", args=[issues[0].pk]))

    @admin.action(
        description="Retry the failed deliveries of the selected issues", permissions=["change"]
    )
    def retry_failed(self, request, queryset) -> None:
        total = sum(
            sending.retry_failed(issue_id=pk, queue_chunk=tasks.queue_chunk)
            for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"{deliveries_phrase(total)} queued again.")

    @admin.action(description="Send a test of the selected issues to me", permissions=["view"])
    def send_test_to_me(self, request, queryset) -> None:
        for issue in queryset:
            self._send_test(request, issue)

    @admin.action(
        description="Draft next week's issue from new notes and chapters", permissions=["add"]
    )
    def draft_next_issue(self, request, queryset) -> None:
        issue = composing.draft_next_issue()
        self.message_user(request, f"Drafted “{issue}”.")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = extra_context or {}
        issue = Issue.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        if issue is not None and not issue.is_editable:
            extra_context["progress_html"] = self.progress_html(
                request, self.progress_context(issue)
            )
        return super().change_view(request, object_id, form_url, extra_context)


def _when(moment) -> str:
    return timezone.localtime(moment).strftime("%-d %b %Y, %H:%M:%S") if moment else "—"


@admin.register(Subscriber)
class SubscriberAdmin(admin.ModelAdmin):
    list_display = [
        "email", "name", "status", "soft_bounces", "source", "created_at", "confirmed_at",
    ]  # fmt: skip
    list_filter = ["status"]  # includes bounced / complained (suppressed)
    search_fields = ["email"]
    show_full_result_count = False
    list_per_page = 100
    raw_id_fields = ["user"]
    readonly_fields = [
        "created_at", "updated_at", "confirmed_at", "unsubscribed_at", "soft_bounces",
        "suppressed_at", "suppressed_reason",
    ]  # fmt: skip
    actions = ["unsubscribe_selected"]

    @admin.action(description="Unsubscribe the selected subscribers", permissions=["change"])
    def unsubscribe_selected(self, request, queryset) -> None:
        count = queryset.exclude(status=Subscriber.Status.UNSUBSCRIBED).update(
            status=Subscriber.Status.UNSUBSCRIBED, unsubscribed_at=timezone.now()
        )
        self.message_user(request, f"{count} unsubscribed.")


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "subscriber_email", "issue", "status", "attempts", "error", "sent_at", "event",
    ]  # fmt: skip
    list_filter = ["status", "event", "issue"]
    list_select_related = ["subscriber", "issue"]
    search_fields = ["subscriber__email"]
    show_full_result_count = False
    list_per_page = 100
    raw_id_fields = ["issue", "subscriber"]
    readonly_fields = [
        "issue", "subscriber", "status", "attempts", "last_error", "sent_at", "lease_owner",
        "lease_until", "next_attempt_at", "created_at", "updated_at", "esp_message_id",
        "event", "event_at", "event_description",
    ]  # fmt: skip

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="subscriber", ordering="subscriber__email")
    def subscriber_email(self, obj: Delivery) -> str:
        return obj.subscriber.email

    @admin.display(description="last error")
    def error(self, obj: Delivery) -> str:
        if not obj.last_error:
            return "—"
        short = obj.last_error if len(obj.last_error) <= 80 else obj.last_error[:79] + "…"
        return format_html('<span title="{}">{}</span>', obj.last_error, short)


@admin.register(BounceEvent)
class BounceEventAdmin(admin.ModelAdmin):
    """Reports from ESP webhooks and DSN mail, as received (read-only)."""

    list_display = ["recipient", "kind", "occurred_at", "description", "key"]
    list_filter = ["kind"]
    search_fields = ["recipient"]
    show_full_result_count = False
    list_per_page = 100
    raw_id_fields = ["subscriber", "delivery"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

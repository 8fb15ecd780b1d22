"""Editors' admin: inlines, filters, read-only runs, history, and the queued check action."""

import datetime as dt
import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from notebook.models import Correction, Note, SnippetCheck, SnippetRun
from tests.factories import UserFactory
from tests.notebook.factories import NoteFactory, SnippetCheckFactory, SnippetRunFactory
from tests.support.waiting import wait_until

CHANGELIST = reverse("admin:notebook_note_changelist")


@pytest.mark.django_db
def test_editors_group_has_every_notebook_permission():
    group = Group.objects.get(name="Editors")
    codenames = set(
        group.permissions.filter(content_type__app_label="notebook").values_list(
            "codename", flat=True
        )
    )
    for model in ("note", "topic", "correction", "snippetcheck", "snippetrun"):
        for action in ("add", "change", "delete", "view"):
            assert f"{action}_{model}" in codenames


@pytest.mark.django_db
def test_admin_filters_by_verified_and_corrected(editor_client):
    verified = NoteFactory(title="Checked and passing")
    SnippetRunFactory(snippet_check=SnippetCheckFactory(note=verified))
    corrected = NoteFactory(title="Once wrong")
    Correction.objects.create(note=corrected, what_was_wrong="x", what_changed="y")
    plain = NoteFactory(title="Plain")
    listed = lambda params: {  # noqa: E731
        n.pk for n in editor_client.get(CHANGELIST, params).context["cl"].result_list
    }
    assert listed({"verified": "yes"}) == {verified.pk}
    assert listed({"verified": "no"}) == {corrected.pk, plain.pk}
    assert listed({"corrected": "yes"}) == {corrected.pk}
    assert listed({"kind__exact": "code"}) == {verified.pk, corrected.pk, plain.pk}


@pytest.mark.django_db
def test_admin_adds_a_correction_with_the_fix_in_one_step(editor_client):
    note = NoteFactory(title="KV cache", slug="kv", body="Each step is O(1).")
    url = reverse("admin:notebook_note_change", args=[note.pk])
    page = editor_client.get(url).content.decode()
    assert 'name="corrections-TOTAL_FORMS"' in page
    assert 'name="checks-TOTAL_FORMS"' in page
    response = editor_client.post(
        url,
        {
            "title": "KV cache",
            "slug": "kv",
            "date": "2026-04-21",
            "kind": "code",
            "summary": note.summary,
            "body": "Each step is O(t).",
            "published": "on",
            "checks-TOTAL_FORMS": "0",
            "checks-INITIAL_FORMS": "0",
            "corrections-TOTAL_FORMS": "1",
            "corrections-INITIAL_FORMS": "0",
            "corrections-0-date": "2026-05-09",
            "corrections-0-what_was_wrong": "Said O(1).",
            "corrections-0-what_changed": "Now says O(t).",
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    correction = note.corrections.get()
    assert (correction.date, correction.what_was_wrong) == (dt.date(2026, 5, 9), "Said O(1).")
    assert [h.body for h in note.history.order_by("history_date")] == [
        "Each step is O(1).",
        "Each step is O(t).",
    ]
    history = editor_client.get(reverse("admin:notebook_note_history", args=[note.pk]))
    assert "Each step is O(t)." in history.content.decode()


@pytest.mark.django_db
def test_admin_runs_are_read_only(editor_client):
    run = SnippetRunFactory()
    url = reverse("admin:notebook_snippetrun_change", args=[run.pk])
    page = editor_client.get(url)
    assert page.status_code == 200
    assert 'name="status"' not in page.content.decode()
    assert editor_client.get(reverse("admin:notebook_snippetrun_add")).status_code == 403


@pytest.mark.django_db
def test_saving_new_code_queues_a_run(django_capture_on_commit_callbacks):
    check = SnippetCheckFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        check.code = "print(41 + 1)"
        check.save()
    assert len(callbacks) == 1
    assert SnippetCheck.objects.get(pk=check.pk).code_hash == check.compute_code_hash()
    with django_capture_on_commit_callbacks() as callbacks:
        check.name = "renamed only"
        check.save()
    assert callbacks == []


@pytest.mark.django_db
def test_admin_action_queues_one_run_per_note_with_checks_after_commit(
    editor_client, django_capture_on_commit_callbacks
):
    checked = NoteFactory(title="Two checks")
    SnippetCheckFactory.create_batch(2, note=checked)
    bare = NoteFactory(title="No checks")
    with django_capture_on_commit_callbacks() as callbacks:
        response = editor_client.post(
            CHANGELIST,
            {"action": "run_snippet_checks", "_selected_action": [checked.pk, bare.pk]},
            follow=True,
        )
    assert len(callbacks) == 1  # one run_note_checks task, for the note that has checks
    assert "Queued snippet checks for 1 note(s). 1 note(s) have no checks." in (
        response.content.decode()
    )
    assert not SnippetRun.objects.exists()  # queued, not run in the web process


@pytest.mark.worker
def test_admin_action_queues_and_a_real_worker_runs_the_check(shared_worker):
    user = UserFactory(email="boss@example.com", is_staff=True, is_superuser=True)
    note = NoteFactory(title="Worker checked")
    check = SnippetCheck(note=note, name="sum", code="print(sum(range(10)))")
    check.expected_output = "45"
    check.code_hash = check.compute_code_hash()  # so saving queues nothing by itself
    check.save()
    client = Client()
    client.force_login(user)
    response = client.post(
        CHANGELIST, {"action": "run_snippet_checks", "_selected_action": [note.pk]}
    )
    assert response.status_code == 302

    # Queued, not run in the web process: the worker logs the task, and there is one run only.
    wait_until(
        lambda: re.search(r"Task notebook\.tasks\.\w+\[[-\w]+\] succeeded", shared_worker.log()),
        timeout=60,
        interval=0.25,
        message=shared_worker.log,
    )
    run = SnippetRun.objects.get(snippet_check=check)
    assert run.status == SnippetRun.Status.PASSED, run.detail
    assert run.output == "45\n"
    assert Note.objects.with_marks().get(pk=note.pk).is_verified is True


def test_admin_history_shows_a_line_diff_of_the_body(editor_client):
    note = NoteFactory(body="Softmax is shift-invariant.\nSubtract the max first.\nDone.")
    note.body = "Softmax is shift-invariant.\nSubtract the row max first.\nDone."
    note.save()
    response = editor_client.get(reverse("admin:notebook_note_history", args=[note.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<pre class="note-diff">' in html
    assert "-Subtract the max first." in html
    assert "+Subtract the row max first." in html
    assert "Softmax is shift-invariant.\nSubtract" not in html  # not the whole text twice

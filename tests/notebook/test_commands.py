"""check_snippets for CI, and the demo loader."""

import pytest
from django.core.management import CommandError, call_command

from notebook import demo
from notebook.models import Correction, Note, SnippetCheck, SnippetRun
from tests.notebook.factories import NoteFactory, SnippetCheckFactory

pytestmark = pytest.mark.django_db


def test_check_snippets_passes_and_exits_zero(capsys):
    SnippetCheckFactory(note=NoteFactory(slug="fine"))
    call_command("check_snippets")
    out = capsys.readouterr().out
    assert "1 of 1 checks passed." in out
    assert SnippetRun.objects.get().status == SnippetRun.Status.PASSED


def test_check_snippets_fails_with_status_one(capsys):
    SnippetCheckFactory(note=NoteFactory(slug="fine"))
    SnippetCheckFactory(note=NoteFactory(slug="broken"), expected_output="43")
    with pytest.raises(CommandError) as excinfo:
        call_command("check_snippets")
    assert excinfo.value.returncode == 1
    out = capsys.readouterr().out
    assert "failed    broken / " in out
    assert "-43\n+42" in out


def test_check_snippets_one_note_by_slug(capsys):
    SnippetCheckFactory(note=NoteFactory(slug="fine"))
    SnippetCheckFactory(note=NoteFactory(slug="broken"), expected_output="43")
    call_command("check_snippets", "fine")
    assert SnippetRun.objects.count() == 1
    with pytest.raises(CommandError, match="No note with checks has the slug: nope"):
        call_command("check_snippets", "nope")


def test_demo_loads_verified_notes_and_is_idempotent():
    summary = demo.load()
    assert summary == "16 notes, 6 topics, 11 check run(s), 11 verified"
    assert Note.objects.published().count() == 16
    assert Correction.objects.filter(note__slug="kv-cache").count() == 1
    assert SnippetCheck.objects.filter(packages="numpy").count() >= 5
    history = Note.history.count()
    assert demo.load() == "16 notes, 6 topics, 0 check run(s), 11 verified"
    assert Note.history.count() == history
    assert SnippetRun.objects.count() == 11

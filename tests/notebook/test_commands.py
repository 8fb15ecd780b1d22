"""check_snippets for CI (the demo loader is tested in test_content.py)."""

import pytest
from django.core.management import CommandError, call_command

from notebook.models import SnippetRun
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

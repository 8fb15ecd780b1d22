"""Notes: a formula that cannot be typeset is refused on save, in admin (on its field) and in
the content files (naming the file and what is wrong)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from notebook import contentfiles
from notebook.models import Note
from platform.frontmatter import ContentError
from tests.notebook.factories import NoteFactory

pytestmark = pytest.mark.django_db

NOTE = """\
+++
title = "A note"
slug = "a-note"
date = 2026-05-02
kind = "derivation"
why_it_matters = "It matters."
published = true
+++

The body has $$\\frac{1}{$$ in it.
"""


def note_form(note: Note, body: str) -> dict[str, str]:
    return {
        "title": note.title,
        "slug": note.slug,
        "date": "2026-04-21",
        "kind": "derivation",
        "summary": note.summary,
        "body": body,
        "published": "on",
        "checks-TOTAL_FORMS": "0",
        "checks-INITIAL_FORMS": "0",
        "corrections-TOTAL_FORMS": "0",
        "corrections-INITIAL_FORMS": "0",
    }


def test_admin_note_body_with_unknown_command_is_refused_on_the_body(editor_client):
    note = NoteFactory(title="Scores", slug="scores", body="Old.")
    url = reverse("admin:notebook_note_change", args=[note.pk])
    response = editor_client.post(url, note_form(note, "Divide by $\\sqroot{d_k}$."))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["body"] == [
        "A formula here cannot be typeset: $\\sqroot{d_k}$: unknown command \\sqroot."
    ]
    assert Note.objects.get(pk=note.pk).body == "Old."
    response = editor_client.post(url, note_form(note, "Divide by $\\sqrt{d_k}$."))
    assert response.status_code == 302
    assert Note.objects.get(pk=note.pk).body == "Divide by $\\sqrt{d_k}$."


def test_load_refuses_note_with_a_broken_formula(tmp_path: Path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/a-note.md").write_text(NOTE)
    with pytest.raises(ContentError) as caught:
        contentfiles.load(tmp_path)
    message = str(caught.value)
    assert "a-note.md" in message
    assert "A formula here cannot be typeset: $\\frac{1}{$: unbalanced braces" in message
    assert Note.objects.count() == 0

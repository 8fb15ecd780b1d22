"""A reader filters the notebook by topic, opens a note and sees Verified and Corrected."""

import datetime as dt

import pytest

from notebook.models import SnippetRun
from tests.notebook.factories import (
    CorrectionFactory,
    NoteFactory,
    SnippetCheckFactory,
    SnippetRunFactory,
    TopicFactory,
)


@pytest.mark.browser
def test_browser_filter_by_topic_open_note_see_marks(page, live_server):
    rope = TopicFactory(name="RoPE", slug="rope")
    other = TopicFactory(name="Statistics", slug="statistics")
    NoteFactory(title="Bessel's correction", topics=[other], date=dt.date(2026, 6, 1))
    note = NoteFactory(title="Rotary embeddings", topics=[rope], body="Rotate pairs by $m\\theta$.")
    SnippetRunFactory(snippet_check=SnippetCheckFactory(note=note), status=SnippetRun.Status.PASSED)
    CorrectionFactory(note=note, date=dt.date(2026, 5, 9), what_was_wrong="Rotated V too.")

    page.goto("/notebook/")
    assert page.get_by_role("link", name="Bessel's correction").is_visible()
    page.locator(".nb-filters").get_by_role("link", name="RoPE").click()
    page.wait_for_url("**/notebook/?topic=rope")
    page.get_by_role("heading", name="Notes on RoPE").wait_for()
    assert page.get_by_role("link", name="Bessel's correction").count() == 0

    page.get_by_role("link", name="Rotary embeddings").click()
    page.get_by_role("heading", name="Rotary embeddings", level=1).wait_for()
    assert page.locator(".nb-meta .nb-verified").inner_text() == "Verified"
    assert page.locator(".nb-meta .nb-corrected").inner_text() == "Corrected"
    corrections = page.locator(".nb-correction-list li")
    assert corrections.count() == 1
    assert "May 9, 2026" in corrections.first.inner_text()
    assert "Rotated V too." in corrections.first.inner_text()
    assert page.locator(".nb-body math").count() == 1
    page.get_by_role("link", name="See the code and its output").click()
    page.get_by_role("heading", name="Snippet checks of “Rotary embeddings”").wait_for()
    page.watch.assert_clean()

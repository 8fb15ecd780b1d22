"""One new chapter of the track end to end in a real browser: label every equation's parts,
use its widget, answer every question from the content, mark it finished."""

from __future__ import annotations

import pytest

from courses.models import Chapter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_multi_head_attention_chapter_end_to_end_in_browser(page, transactional_db, demo_course):
    chapter = Chapter.objects.get(slug="multi-head-attention")
    equations = list(chapter.equations.prefetch_related("parts"))
    questions = list(chapter.questions.prefetch_related("choices"))

    page.goto(chapter.get_absolute_url())
    assert page.locator("h1").inner_text() == chapter.title
    assert page.locator("math").count() >= len(equations)

    # Label the parts of every equation.
    for equation in equations:
        parts = list(equation.parts.all())
        form = page.locator(f"#label-{equation.pk}")
        if not form.is_visible():  # each equation's exercise folds; the first starts open
            page.locator("details.label-eq", has=form).locator("summary").click()
        for part in parts:
            form.locator(f"#part-{part.pk}").select_option(part.role)
        form.get_by_role("button", name="Check my labels").click()
        score = page.locator(f"#label-{equation.pk} .label-score")
        score.wait_for()
        assert score.inner_text() == f"{len(parts)} / {len(parts)} parts right."

    # The widget: four heads instead of two, swapped in place by htmx.
    widget = page.locator("#embed-multi-head")
    assert widget.locator(".head").count() == 2
    widget.locator("#embed-multi-head-heads").fill("4")
    widget.get_by_role("button", name="Compute").click()
    widget.locator(".widget-summary", has_text="4 heads of width d_model / h = 2").wait_for()
    assert widget.locator(".head").count() == 4

    # Every question, answered from the content, all at once.
    for question in questions:
        choice = next(c for c in question.choices.all() if c.is_correct)
        page.locator(f"#choice-{choice.pk}").check()
    page.get_by_role("button", name="Check all answers").click()
    n = len(questions)
    page.locator(".done-count", has_text=f"{n} / {n} done").wait_for()
    assert page.locator("#check .badge-ok", has_text="Check passed").count() == 1

    page.get_by_role("button", name="Yes, mark it finished").click()
    page.locator(".finished-note").wait_for()
    assert page.locator(".finished-note").inner_text().startswith("Marked finished on")

    page.goto("/courses/dashboard/")
    assert "1 of 11 passed" in page.locator(".dashboard-courses").inner_text()
    page.watch.assert_clean()

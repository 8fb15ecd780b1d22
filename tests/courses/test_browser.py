"""A learner in a real browser: label, answer (one wrong first, then a retry), finish, see the
dashboard."""

from __future__ import annotations

import pytest

from courses.models import Chapter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_capstone_chapter_label_answer_finish_in_browser(page, transactional_db, demo_course):
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    attention = chapter.equations.get(title="Scaled dot-product attention")
    parts = list(attention.parts.all())
    questions = list(chapter.questions.prefetch_related("choices"))

    page.goto(chapter.get_absolute_url())
    assert page.locator("h1").inner_text() == chapter.title
    assert page.locator("math").count() >= 4

    # Label the parts of the attention equation.
    form = page.locator(f"#label-{attention.pk}")
    for part in parts:
        form.locator(f"#part-{part.pk}").select_option(part.role)
    form.get_by_role("button", name="Check my labels").click()
    score = page.locator(f"#label-{attention.pk} .label-score")
    score.wait_for()
    assert score.inner_text() == f"{len(parts)} / {len(parts)} parts right."
    assert page.locator(f"#label-{attention.pk} .part-feedback").count() == len(parts)

    # Question 1: a wrong answer first, then the right one.
    q1 = questions[0]
    wrong = next(c for c in q1.choices.all() if not c.is_correct)
    right = next(c for c in q1.choices.all() if c.is_correct)
    page.locator(f"#choice-{wrong.pk}").check()
    page.get_by_role("button", name="Check Q1").click()
    page.locator(f"#q-{q1.pk} .verdict").wait_for()
    assert page.locator(f"#q-{q1.pk} .verdict strong").first.inner_text() == "✗ Not quite."
    assert page.locator(".done-count").inner_text() == "0 / 4 done"
    page.locator(f"#choice-{right.pk}").check()
    page.get_by_role("button", name="Try Q1 again").click()
    page.locator(".done-count", has_text="1 / 4 done").wait_for()

    # The other three, all on the page at once.
    for question in questions[1:]:
        choice = next(c for c in question.choices.all() if c.is_correct)
        page.locator(f"#choice-{choice.pk}").check()
    page.get_by_role("button", name="Check all answers").click()
    page.locator(".done-count", has_text="4 / 4 done").wait_for()
    assert page.locator("#check .badge-ok", has_text="Check passed").count() == 1

    # Finished this chapter?
    page.get_by_role("button", name="Yes, mark it finished").click()
    page.locator(".finished-note").wait_for()
    assert page.locator(".finished-note").inner_text().startswith("Marked finished on")

    page.goto("/courses/dashboard/")
    assert "1 of 11 passed" in page.locator(".dashboard-courses").inner_text()
    passed = page.locator(".dashboard-courses .mark-passed")
    assert passed.count() == 1 and chapter.title in passed.inner_text()
    assert "Answered wrong" in page.locator(".activity-list").inner_text()
    page.watch.assert_clean()

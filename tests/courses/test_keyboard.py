"""A learner with a keyboard and no mouse: every step below uses ``page.keyboard`` only.

They reach the table of contents in a few Tabs, label the parts of an equation, use a widget
(a bad value stays inside the widget), answer the check (one wrong first, then a retry) and mark
the chapter finished. After every answer focus is on the feedback, the live region says what
happened, and the next Tab continues to the next control. Two days later (time moved forward)
they review the question they first got wrong, by keyboard as well.
"""

from __future__ import annotations

import pytest

from courses.models import Chapter, ReviewCard
from tests.courses.test_review import _travel

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ACTIVE = "() => { const e = document.activeElement; return e ? (e.id || e.tagName) : ''; }"


def _active_in(page, selector: str) -> bool:
    return page.evaluate(
        "(sel) => { const e = document.activeElement; return !!(e && e.closest(sel)); }", selector
    )


def _tab_until(page, predicate, *, limit: int, backwards: bool = False) -> int:
    """Press Tab (or Shift+Tab) until ``predicate()`` holds; the number of presses."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        if predicate():
            return presses
    raise AssertionError(f"not reached in {limit} presses; focus is on {page.evaluate(ACTIVE)}")


def _pick_radio(page, choice_id: int, count: int) -> None:
    """With focus in a radio group, move to (and check) one choice with the arrow keys."""
    page.keyboard.press("Space")
    for _ in range(count):
        if page.evaluate(ACTIVE) == f"choice-{choice_id}":
            break
        page.keyboard.press("ArrowDown")
    assert page.evaluate(ACTIVE) == f"choice-{choice_id}"
    assert page.locator(f"#choice-{choice_id}").is_checked()


def _check_question(page, question, choice, number: int, *, retry: bool = False) -> None:
    _pick_radio(page, choice.pk, question.choices.count())
    _tab_until(
        page,
        lambda: page.evaluate(ACTIVE) == "BUTTON" and _active_in(page, f"#q-{question.pk}"),
        limit=3,
    )
    button = f"Try Q{number} again" if retry else f"Check Q{number}"
    assert page.evaluate("document.activeElement.textContent") == button
    page.keyboard.press("Enter")
    page.locator(f"#q-{question.pk} .verdict").wait_for()
    page.wait_for_function(
        "(sel) => document.activeElement && document.activeElement.closest(sel)",
        arg=f"#q-{question.pk} .verdict",
    )


def test_chapter_completed_with_the_keyboard_alone(page, transactional_db, demo_course):
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    equation = chapter.equations.get(title="Scaled dot-product attention")
    parts = list(equation.parts.all())
    labelled_total = sum(1 for e in chapter.equations.all() if e.parts.exists())
    questions = list(chapter.questions.prefetch_related("choices"))
    page.watch.allowed_statuses.add(400)  # the widget's answer to a bad value
    page.goto(chapter.get_absolute_url())

    # The table of contents is close to the top: the skip link, the header, the breadcrumb.
    presses = _tab_until(page, lambda: _active_in(page, "#chapter-toc"), limit=20)
    assert presses <= 16
    toc = page.locator("#chapter-toc")
    assert toc.locator(".toc-list").inner_text().count("\n") >= 5
    _tab_until(
        page,
        lambda: page.evaluate("document.activeElement.getAttribute('href')") == "#try-it",
        limit=4,
    )
    page.keyboard.press("Enter")
    assert page.url.endswith("#try-it")

    # Label the parts of the attention equation: Tab into each select, type the role.
    _tab_until(page, lambda: page.evaluate(ACTIVE) == f"part-{parts[0].pk}", limit=4)
    for i, part in enumerate(parts):
        if i:
            page.keyboard.press("Tab")
        assert page.evaluate(ACTIVE) == f"part-{part.pk}"
        page.keyboard.type(part.role)
        assert page.locator(f"#part-{part.pk}").input_value() == part.role
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Check my labels"
    page.keyboard.press("Enter")
    score = page.locator(f"#label-{equation.pk} .label-score")
    score.wait_for()
    expected = f"{len(parts)} / {len(parts)} parts right."
    assert score.inner_text() == expected
    # Focus is on the score, the live region read it out, the TOC counted the labelled equation.
    page.wait_for_function("() => document.activeElement.classList.contains('form-feedback')")
    assert _active_in(page, f"#label-{equation.pk}")
    page.wait_for_function(
        "(t) => document.getElementById('live-region').textContent === t", arg=expected
    )
    assert toc.locator(".toc-list").inner_text().count(f"1 / {labelled_total} labelled") == 1
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Check my labels"

    # The attention widget: a bad token count stays inside the widget; a good one computes.
    _tab_until(
        page,
        lambda: (
            page.evaluate("document.activeElement.name") == "tokens"
            and _active_in(page, "#embed-attention")
        ),
        limit=80,
    )
    tokens = page.evaluate(ACTIVE)
    page.keyboard.press("Control+A")
    page.keyboard.type("100")
    error = page.locator("#embed-attention .widget-errors")
    error.wait_for()
    assert "Enter a whole number from 1 to 64." in error.inner_text()
    assert page.locator("h1").inner_text() == chapter.title  # the page is still there
    assert page.evaluate(ACTIVE) == tokens  # typing goes on where it was
    page.keyboard.press("Control+A")
    page.keyboard.type("3")
    page.locator("#embed-attention .widget-summary", has_text="3 tokens at").wait_for()
    assert page.evaluate(ACTIVE) == tokens
    page.wait_for_function(
        "() => document.getElementById('live-region').textContent.startsWith('3 tokens')"
    )

    # The check: Q1 wrong first, then right; each answer's feedback takes focus.
    q1 = questions[0]
    _tab_until(page, lambda: _active_in(page, f"#q-{q1.pk}"), limit=200)
    wrong = next(c for c in q1.choices.all() if not c.is_correct)
    right = next(c for c in q1.choices.all() if c.is_correct)
    _check_question(page, q1, wrong, 1)
    verdict = " ".join(page.locator(f"#q-{q1.pk} .verdict").inner_text().split())
    page.wait_for_function(
        "(t) => document.getElementById('live-region').textContent.startsWith(t)", arg=verdict[:40]
    )
    # Back to the choices (Shift+Tab), the right one this time.
    _tab_until(page, lambda: _active_in(page, f"#q-{q1.pk} .choices"), limit=3, backwards=True)
    _check_question(page, q1, right, 1, retry=True)
    assert "1 / 4" in page.locator("#chapter-toc .toc-list").inner_text()

    for number, question in enumerate(questions[1:], start=2):
        # From the feedback, Tab reaches the next question (past this question's button).
        presses = _tab_until(page, lambda q=question: _active_in(page, f"#q-{q.pk}"), limit=3)
        assert presses <= 2
        choice = next(c for c in question.choices.all() if c.is_correct)
        _check_question(page, question, choice, number)
    page.locator(".done-count", has_text="4 / 4 done").wait_for()
    assert "all answered" in toc.locator(".toc-list").inner_text()

    # Finished: Tab to the button, Enter; focus on the note that says so.
    _tab_until(
        page,
        lambda: page.evaluate("document.activeElement.textContent") == "Yes, mark it finished",
        limit=6,
    )
    page.keyboard.press("Enter")
    note = page.locator("#finish .finished-note")
    note.wait_for()
    page.wait_for_function("() => document.activeElement.closest('#finish .form-feedback')")
    page.wait_for_function(
        "() => document.getElementById('live-region').textContent.startsWith('Marked finished')"
    )
    assert "finished" in toc.locator(".toc-list li.is-done").last.inner_text()

    # Two days later (the learner's history moves back), Q1 is due: review it by keyboard too.
    _travel(days=2)
    page.goto("/courses/dashboard/")
    _tab_until(
        page,
        lambda: page.evaluate("document.activeElement.getAttribute('href')") == "/review/",
        limit=40,
    )
    page.keyboard.press("Enter")
    page.wait_for_url("**/review/")
    assert page.locator("#review-progress-label").inner_text().startswith("Card 1 of ")
    assert page.locator(f"#review #choice-{right.pk}").count() == 1  # Q1's card comes first
    _tab_until(page, lambda: _active_in(page, "#review .choices"), limit=20)
    _pick_radio(page, right.pk, q1.choices.count())
    _tab_until(
        page, lambda: page.evaluate("document.activeElement.textContent") == "Check", limit=3
    )
    page.keyboard.press("Enter")
    page.locator("#review .verdict.feedback-ok").wait_for()
    page.wait_for_function("() => document.activeElement.closest('#review .verdict')")
    _tab_until(
        page, lambda: page.evaluate("document.activeElement.textContent") == "Next card", limit=4
    )
    page.keyboard.press("Enter")
    page.locator("#review-progress-label", has_text="Card 2 of ").wait_for()
    assert ReviewCard.objects.get(question=q1).last_rating == 3  # Good

    errors = [e for e in page.watch.console_errors if "status of 400" not in e]
    assert errors == []
    page.watch.console_errors = errors
    page.watch.assert_clean()

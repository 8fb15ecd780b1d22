"""axe-core on the main pages, light and dark, signed in or not: no serious or critical
violation and no error in the browser console, the review page with a card due and answered
too (tests/support/axe.py is the reusable part)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from courses.models import Chapter
from notebook.models import Note
from tests.courses.conftest import demo_course, demo_notes  # noqa: F401 - fixtures
from tests.support.axe import axe_violations, require_axe

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CAPSTONE = "capstone-three-equations"


def _pages(*, signed_in: bool) -> list[str]:
    chapter = Chapter.objects.select_related("course").get(slug=CAPSTONE)
    note = Note.objects.filter(published=True).first() or Note.objects.first()
    pages = [
        "/",
        "/courses/",
        chapter.course.get_absolute_url(),
        chapter.get_absolute_url(),
        "/courses/dashboard/",
        "/review/",
        note.get_absolute_url(),
        "/search/?q=softmax",
        "/widgets/attention/?tokens=24&causal=on",
        "/widgets/walkthrough/?latex=%5Csqrt%7Bd_k%7D",
    ]
    if signed_in:
        pages += ["/account/"]
    else:
        pages += ["/accounts/login/", "/accounts/signup/", "/accounts/password/reset/"]
    return pages


def _sign_in(page, user) -> None:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies(
        [{"name": cookie.key, "value": cookie.value, "url": page.watch.origin}]
    )


def _answer_some(page, chapter: Chapter) -> None:
    """Leave verdicts and feedback on the page, so axe sees the answered state too."""
    question = chapter.questions.prefetch_related("choices").first()
    wrong = next(c for c in question.choices.all() if not c.is_correct)
    page.locator(f"#choice-{wrong.pk}").check()
    page.get_by_role("button", name="Check Q1").click()
    page.locator(f"#q-{question.pk} .verdict").wait_for()
    form = page.locator(".label-form").first
    for select in form.locator("select").all():
        select.select_option("output")
    form.get_by_role("button", name="Check my labels").click()
    form.locator(".label-score").wait_for()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "signed-in"])
def test_main_pages_have_no_serious_axe_violation(page, demo_course, learner, scheme, signed_in):  # noqa: F811
    require_axe()
    page.emulate_media(color_scheme=scheme)
    if signed_in:
        _sign_in(page, learner)
    found: dict[str, list[str]] = {}
    for url in _pages(signed_in=signed_in):
        response = page.goto(url)
        assert response.status == 200, url
        found[url] = axe_violations(page)
    chapter = Chapter.objects.select_related("course").get(slug=CAPSTONE)
    page.goto(chapter.get_absolute_url())
    _answer_some(page, chapter)
    found["chapter, answered"] = axe_violations(page)
    page.goto("/review/")  # the wrong answer's card is due for its retry
    page.locator("#review .review-card").wait_for()
    found["review, a card due"] = axe_violations(page)
    page.locator("#review input[type=radio]").first.check()
    page.get_by_role("button", name="Try again").click()
    page.locator("#review .verdict").wait_for()
    found["review, answered"] = axe_violations(page)
    assert found == {key: [] for key in found}
    page.watch.assert_clean()

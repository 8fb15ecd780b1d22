"""The typesetting gallery in a real Chromium with the site's math font: staff see every formula
typeset (no error, no raw TeX), at desktop width and on a phone, light and dark; the
screenshots land in var/test/screenshots/ for review."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from courses import contentfiles
from courses.formulas import REGRESSION_CASES, all_formulas

from .factories import ChapterFactory, EquationFactory


def sign_in(page, live_server, user) -> None:
    """Give the browser the session of a test client signed in as ``user``."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}]
    )


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 360])
def test_gallery_typesets_every_content_formula(page, live_server, editor, width, scheme):
    contentfiles.load_demo()
    expected = len(REGRESSION_CASES) + len({(f.latex.strip(), f.display) for f in all_formulas()})
    sign_in(page, live_server, editor)
    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size({"width": width, "height": 900})
    response = page.goto("/courses/gallery/")
    assert response.status == 200
    page.evaluate("document.fonts.ready.then(() => true)")
    assert page.locator(".gallery-item math").count() == expected
    assert page.locator("merror, .math-error").count() == 0
    # The rendered boxes show maths, not source: no backslash in any formula's visible text.
    shown = page.locator(".gallery-rendered").all_inner_texts()
    assert [text for text in shown if "\\" in text] == []
    # Screen readers and copy get the source: each formula's alttext is the LaTeX shown under it.
    mismatched = page.evaluate(
        """Array.from(document.querySelectorAll('.gallery-item'))
             .filter(li => li.querySelector('math').getAttribute('alttext')
                           !== li.querySelector('code').textContent)
             .map(li => li.querySelector('code').textContent)"""
    )
    assert mismatched == []
    # A lone transpose is drawn at text size, not as a tiny raised glyph.
    top = page.locator(".gallery-item", has_text="^\\top").first.locator("math")
    assert top.bounding_box()["height"] > 14
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    page.watch.assert_clean()
    shots = settings.VAR_DIR / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"gallery-{width}-{scheme}.png"), full_page=False)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_admin_preview_follows_typing_and_names_the_problem(page, live_server, editor):
    from playwright.sync_api import expect

    chapter = ChapterFactory(slug="norms", title="Norms")
    equation = EquationFactory(chapter=chapter, latex="y = x", widget="")
    sign_in(page, live_server, editor)
    page.goto(reverse("admin:courses_equation_change", args=[equation.pk]))
    preview = page.locator("#id_latex-preview")
    expect(preview.locator("math")).to_have_attribute("alttext", "y = x")  # shown on load
    page.fill("#id_latex", "y = \\frac{1}{")
    expect(preview.locator(".math-preview-problem")).to_have_text(
        "unbalanced braces: 1 “{” not closed"
    )
    expect(preview.locator("math")).to_have_count(0)
    page.fill("#id_latex", "y = \\frac{1}{2}")
    expect(preview.locator("math")).to_have_attribute("alttext", "y = \\frac{1}{2}")
    page.fill("#id_shape_note", "Scale by $\\alpha$.")
    note_maths = page.locator("#id_shape_note-preview math")
    expect(note_maths).to_have_count(1)  # the factory's note had two formulas
    expect(note_maths).to_have_attribute("alttext", "\\alpha")
    # No CSP refusal or script error. Stock admin has no icon link, so Chromium's own
    # /favicon.ico request 404s (a browser request, not one of the page's).
    favicon = "Failed to load resource: the server responded with a status of 404 (Not Found)"
    assert [e for e in page.watch.console_errors if e != favicon] == []
    assert page.watch.bad_responses == page.watch.failed_requests == []
    assert page.watch.foreign_requests == []
    shots = settings.VAR_DIR / "screenshots"
    page.screenshot(path=str(shots / "admin-preview.png"), full_page=True)

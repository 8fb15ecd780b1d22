"""The typesetting gallery in a real Chromium with the site's math font: staff see every formula
typeset (no error, no raw TeX), at desktop width and on a phone, light and dark; the
screenshots land in var/test/screenshots/ for review."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from courses import contentfiles
from courses.formulas import REGRESSION_CASES, all_formulas


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
    # A lone transpose is drawn at text size, not as a tiny raised glyph.
    top = page.locator(".gallery-item", has_text="^\\top").first.locator("math")
    assert top.bounding_box()["height"] > 14
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    page.watch.assert_clean()
    shots = settings.VAR_DIR / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"gallery-{width}-{scheme}.png"), full_page=False)

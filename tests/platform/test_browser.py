"""The home page in a real Chromium: no console error, no failed or foreign request."""

import pytest


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_home_page_in_browser_is_clean(page):
    response = page.goto("/")
    assert response.status == 200
    assert page.locator("h1").first.inner_text() == "Read the equation, not around it."
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.wait_for_load_state("networkidle")
    page.watch.assert_clean()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_home_page_fits_a_small_phone(page):
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto("/")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    page.watch.assert_clean()

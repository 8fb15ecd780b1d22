"""Pages in a real Chromium: no console error, no failed or foreign request; the math font."""

import pytest

from tests.courses.factories import ChapterFactory, EquationFactory


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


def _is_math_font(url: str) -> bool:
    name = url.rsplit("/", 1)[-1]
    return "/static/" in url and name.endswith(".woff2") and "math" in name.lower()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_page_with_maths_makes_browser_fetch_and_use_the_local_math_font(page, live_server):
    chapter = ChapterFactory(slug="attention", title="Attention")
    EquationFactory(chapter=chapter, latex=r"\frac{Q K^T}{\sqrt{d_k}}")
    with page.expect_response(lambda response: _is_math_font(response.url)) as font:
        page.goto(chapter.get_absolute_url())
    assert page.locator("math").count() >= 1
    # Served by this site (not a CDN), as a font, successfully.
    assert font.value.url.startswith(live_server.url + "/static/")
    assert font.value.status == 200
    assert font.value.headers["content-type"] == "font/woff2"
    assert any(_is_math_font(url) for url in page.watch.requests)
    # ... and the browser decoded it: a loaded font face whose family is the math font.
    page.evaluate("document.fonts.ready.then(() => true)")
    loaded = page.evaluate(
        "Array.from(document.fonts).filter(f => f.status === 'loaded').map(f => f.family)"
    )
    assert any("Math" in family for family in loaded), loaded
    page.watch.assert_clean()

"""The widgets in a real browser: htmx swaps without a page load; plain forms without JavaScript."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def heatmap(page) -> str:
    return page.locator("#w-attention-result table.heatmap tbody").inner_html()


def test_attention_temperature_slider_changes_heatmap_without_page_load(page):
    page.goto(reverse("widgets:attention"))
    page.evaluate("window.__sameDocument = true")
    before = heatmap(page)
    slider = page.locator("#w-attention-temperature")
    assert slider.get_attribute("type") == "range"
    slider.focus()
    with page.expect_response(lambda r: "/widgets/attention/?" in r.url and r.status == 200):
        for _ in range(30):  # s from 0 to 0.30 on the log slider: τ = 10^0.3 ≈ 2.00
            page.keyboard.press("ArrowRight")
    # (A locator, not wait_for_function: its string is eval'd in the page, which the CSP forbids.
    # τ is typeset, and its MathML carries the LaTeX source as text: match what follows it.)
    page.locator("#w-attention-result .widget-summary", has_text=" = 2.00").wait_for()
    after = heatmap(page)
    assert after != before
    assert page.locator("[data-readout-for='w-attention-temperature']").inner_text() == "2"
    assert page.evaluate("window.__sameDocument") is True  # swapped in place, no navigation
    assert page.locator("#w-attention-result td.row-sum").count() == 4
    page.watch.assert_clean()


def test_attention_bad_input_shows_the_400_fragment(page):
    page.watch.allowed_statuses.add(400)
    page.goto(reverse("widgets:attention"))
    with page.expect_response(lambda r: "/widgets/attention/?" in r.url and r.status == 400):
        page.locator("#w-attention-tokens").fill("65")
    alert = page.locator("#w-attention-result .widget-errors")
    alert.wait_for()
    assert "tokens: Enter a whole number from 1 to 64." in alert.inner_text()
    with page.expect_response(lambda r: "/widgets/attention/?" in r.url and r.status == 200):
        page.locator("#w-attention-tokens").fill("5")
    page.locator("#w-attention-result .widget-summary").wait_for()
    assert "5 tokens" in page.locator("#w-attention-result .widget-summary").inner_text()
    # Chromium logs every 4xx as a console error; that one expected 400 is the only one allowed.
    expected = "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    assert page.watch.console_errors == [expected]
    page.watch.console_errors.clear()
    page.watch.assert_clean()


def test_attention_without_javascript_still_answers(no_js_page):
    no_js_page.goto(reverse("widgets:attention"))
    no_js_page.locator("#w-attention-tokens").fill("3")
    no_js_page.locator("#w-attention-causal").check()
    no_js_page.locator("#w-attention form button[type=submit]").click()
    no_js_page.wait_for_url("**/widgets/attention/?*")
    assert "tokens=3" in no_js_page.url and "causal=on" in no_js_page.url
    assert "temperature_scale=0" in no_js_page.url  # the log slider, at τ = 1
    summary = no_js_page.locator(".widget-summary").text_content()
    assert re.match(r"3 tokens at τ.* = 1\.00", summary)  # τ typeset (maybe with its TeX)
    assert no_js_page.locator("table.heatmap tbody tr").count() == 3
    assert no_js_page.locator("table.heatmap td.masked").count() == 3  # drawn as masked
    assert "−∞ → 0" in no_js_page.locator(".mask-legend").first.inner_text()


def test_explorer_decodes_as_the_learner_types(page):
    from courses.contentfiles import DEFAULT_DIR, GLOSSARY_FILE, parse_glossary
    from courses.models import Symbol

    Symbol.objects.bulk_create(Symbol(**e) for e in parse_glossary(DEFAULT_DIR / GLOSSARY_FILE))
    page.goto(reverse("widgets:explorer"))
    with page.expect_response(lambda r: "/widgets/explorer/?" in r.url and r.status == 200):
        page.locator("#id_latex").fill(r"\sqrt{d_k}")
    page.locator("#explorer-result .rendered-equation math").wait_for()
    assert "square root" in page.locator("#explorer-result").inner_text()
    page.watch.assert_clean()


def test_widgets_read_on_a_360_px_screen(page):
    page.set_viewport_size({"width": 360, "height": 800})
    page.goto(reverse("widgets:adam"))
    sizes = page.eval_on_selector_all(
        ".plot-y span, .plot-x span",
        "els => els.map(e => parseFloat(getComputedStyle(e).fontSize))",
    )
    assert len(sizes) == 4 and min(sizes) >= 12  # was ~4 px when the labels scaled with the SVG
    assert page.evaluate("document.documentElement.scrollWidth") == 360
    page.goto(reverse("widgets:attention") + "?tokens=12&causal=on")
    assert page.evaluate("document.documentElement.scrollWidth") == 360  # wide tables scroll
    assert page.locator("table.heatmap td.masked").count() == 66
    page.watch.assert_clean()

"""Widgets that read on any screen: plots with CSS-sized labels, masked cells, log sliders, and
colours that pass contrast in both colour schemes."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from courses.widgets.figures import bar_chart, line_plot
from courses.widgets.forms import SoftmaxForm, scale_of_tau, tau_of_scale

CSS = Path("courses/static/courses/widgets.css").read_text()
SITE_CSS = Path("platform/static/platform/site.css").read_text()
HTMX = {"HTTP_HX_REQUEST": "true"}


def _variables(css: str, dark: bool) -> dict[str, str]:
    """Custom properties of :root, the dark scheme's overriding the light ones."""
    light_part, _, dark_part = css.partition("@media (prefers-color-scheme: dark)")
    found = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", light_part))
    if dark:
        found.update(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", dark_part))
    return found


def _luminance(colour: str) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_heat_levels_pass_text_contrast_in_each_scheme(dark):
    colours = _variables(CSS, dark)
    for level in range(10):
        bg, fg = colours[f"heat-{level}"], colours[f"heat-{level}-fg"]
        assert contrast(bg, fg) >= 4.5, (level, bg, fg)
        assert (
            f".heat-{level} {{ background: var(--heat-{level}); color: var(--heat-{level}-fg); }}"
            in CSS
        )


def test_dark_heatmap_palest_cells_are_not_near_white():
    light, dark = _variables(CSS, False), _variables(CSS, True)
    assert _luminance(light["heat-0"]) > 0.9  # light scheme: pale is near the white card
    assert _luminance(dark["heat-0"]) < 0.05  # dark scheme: "no weight" stays near the dark card
    # and weight still reads as "more": each level further from the card than the one before
    card = _variables(SITE_CSS, True)["card"]
    steps = [contrast(dark[f"heat-{i}"], card) for i in range(10)]
    assert steps == sorted(steps)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_plot_lines_stand_out_from_the_card_in_each_scheme(dark):
    colours = _variables(CSS, dark)
    card = _variables(SITE_CSS, dark)["card"]
    for name in ("line-adam", "line-raw", "line-sgd", "bar"):
        assert contrast(colours[name], card) >= 3.0, (name, colours[name])
    # the dotted SGD line is drawn thicker than the others, so its dots stay visible
    assert ".line-sgd { stroke: var(--line-sgd); stroke-dasharray: 1 5; stroke-width: 3.5; }" in CSS


def test_line_plot_has_a_viewbox_and_html_labels_sized_by_css():
    values = np.linspace(3, 0, 201)
    html = str(line_plot([("a", "line-adam", values)], title="θ", x_max=200, y_lo=-3, y_hi=3))
    assert '<svg class="plot" viewBox="0 0 640 280" preserveAspectRatio="none"' in html
    svg = html[html.index("<svg") : html.index("</svg>")]
    assert "<text" not in svg  # no label shrinks with the drawing
    assert 'vector-effect="non-scaling-stroke"' in svg
    assert (
        '<div class="plot-y" aria-hidden="true"><span>3.00</span><span>−3.00</span></div>' in html
    )
    assert '<div class="plot-x" aria-hidden="true"><span>step 0</span><span>step 200</span>' in html
    assert ".plot-y, .plot-x, .bar-labels { font-size: .8rem;" in CSS


def test_bar_chart_labels_are_html_under_a_viewbox_svg():
    html = str(bar_chart([0.5, 0.25, 0.25], ["x₀", "x₁", "x₂"], title="p"))
    assert '<svg class="bars" viewBox="0 0 120 160"' in html
    assert (
        '<ol class="bar-labels" aria-hidden="true"><li>x₀</li><li>x₁</li><li>x₂</li></ol>' in html
    )


def test_log_slider_puts_one_in_the_middle_and_reaches_both_ends():
    lo, hi = 0.01, 20.0
    assert tau_of_scale(0.0, lo, hi) == 1.0
    assert tau_of_scale(-1.0, lo, hi) == pytest.approx(lo)
    assert tau_of_scale(1.0, lo, hi) == pytest.approx(hi)
    assert tau_of_scale(0.5, lo, hi) == pytest.approx(math.sqrt(hi))
    for tau in (0.01, 0.05, 0.3, 1.0, 2.0, 7.5, 20.0):
        assert tau_of_scale(scale_of_tau(tau, lo, hi), lo, hi) == pytest.approx(tau)
    assert scale_of_tau(1000.0, lo, hi) == 1.0  # clamped to the slider


def test_slider_renders_the_scale_and_reads_out_tau():
    html = str(SoftmaxForm(data={"logits": "1 2", "temperature": "2"})["temperature"])
    s = scale_of_tau(2.0, 0.01, 20.0)
    assert (
        f'name="temperature_scale" id="id_temperature" min="-1" max="1" step="0.01" value="{s:.4f}"'
        in html
    )
    assert 'data-readout-for="id_temperature">2</output>' in html
    middle = str(SoftmaxForm()["temperature"])
    assert 'value="0.0000"' in middle and ">1</output>" in middle


def _tau_shown(response) -> str:
    return re.search(
        r'role="status">At <math.*?</math> = ([\d.]+) the largest', response.content.decode()
    )[1]


@pytest.mark.django_db
def test_server_takes_tau_or_the_slider_scale_with_or_without_htmx(client):
    url = reverse("widgets:softmax")
    by_tau = client.get(url, {"logits": "2 1", "temperature": "3.16227766"}, **HTMX)
    by_scale = client.get(url, {"logits": "2 1", "temperature_scale": "0.5"}, **HTMX)
    assert by_tau.status_code == by_scale.status_code == 200
    assert _tau_shown(by_tau) == "3.16"  # τ taken as given
    assert _tau_shown(by_scale) == f"{math.sqrt(20.0):.2f}"  # s = 0.5 → √20
    page = client.get(url, {"logits": "2 1", "temperature_scale": "-1"})  # no JS: a full page
    assert page.status_code == 200
    assert _tau_shown(page) == "0.01"
    assert 'value="-1.0000"' in page.content.decode()


@pytest.mark.django_db
def test_bad_slider_scale_is_a_400_naming_the_temperature(client):
    url = reverse("widgets:attention")
    response = client.get(url, {"temperature_scale": "nan"}, **HTMX)
    assert response.status_code == 400
    assert (
        "<strong>temperature τ</strong>: Enter a number from 0.05 to 10."
        in response.content.decode()
    )


@pytest.mark.django_db
def test_causal_attention_fragment_draws_masked_cells_with_a_legend(client):
    html = client.get(reverse("widgets:attention"), {"tokens": 4, "causal": "on"}, **HTMX).content
    html = html.decode()
    assert html.count('<td class="masked"><span class="visually-hidden">masked</span></td>') == 12
    assert html.count('<p class="mask-legend">') == 2  # under the weights and the scores
    assert "−∞ → 0" in html and ">0.000</td>" not in html

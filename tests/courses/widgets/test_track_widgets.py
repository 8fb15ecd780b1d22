"""The track's three widgets (cross-entropy, multi-head attention, Adam vs AdamW): exact figures
from the kernels, bad input and caps as 400 fragments, the page without JavaScript, and each
attached to its chapter's equation."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from django.urls import reverse
from django.utils.http import urlencode

from courses.models import Equation
from courses.widgets import kernels

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
TAGS = re.compile(r"<[^>]+>")


def url(key: str, **params) -> str:
    return reverse(f"widgets:{key}") + ("?" + urlencode(params) if params else "")


def text(response) -> str:
    return re.sub(r"\s+", " ", TAGS.sub(" ", response.content.decode()))


def cells(html: str) -> list[str]:
    return re.findall(r"<td[^>]*>([^<]*)</td>", html)


# --- cross-entropy ------------------------------------------------------------------------------


def test_cross_entropy_default_is_the_chapter_example(client):
    response = client.get(url("cross-entropy"), **HTMX)
    assert response.status_code == 200
    body = text(response)
    # softmax(2, 1, 0.1) = (0.6590, 0.2424, 0.0986); ℒ = −log 0.6590 = 0.4170
    assert "Loss 0.4170: the target z0 gets probability 0.6590 and is the model's top choice." in (
        body.replace("&#x27;", "'")
    )
    assert "log 3 = 1.0986" in body
    assert cells(response.content.decode()) == [
        "2.000", "0.6590", "−0.4170", "−0.3410",
        "1.000", "0.2424", "−1.4170", "0.2424",
        "0.100", "0.0986", "−2.3170", "0.0986",
    ]  # fmt: skip
    assert "the gradient adds up to 0.000000" in body


def test_cross_entropy_two_equal_logits_by_hand(client):
    response = client.get(url("cross-entropy", logits="0 0", target=1), **HTMX)
    assert response.status_code == 200
    assert f"Loss {math.log(2):.4f}:" in text(response)  # −log ½ = 0.6931
    assert cells(response.content.decode()) == [
        "0.000", "0.5000", "−0.6931", "0.5000",
        "0.000", "0.5000", "−0.6931", "−0.5000",
    ]  # fmt: skip


def test_cross_entropy_wrong_top_choice_and_huge_logits_stay_finite(client):
    response = client.get(url("cross-entropy", logits="1000 0 -1000", target=2), **HTMX)
    assert response.status_code == 200
    body = text(response)
    assert "Loss 2000.0000: the target z2 gets probability 0.0000, while the top choice is z0." in (
        body
    )
    assert "nan" not in body and "inf" not in body


# --- multi-head attention -----------------------------------------------------------------------


def _reference(tokens=5, d_model=8, heads=2, seed=0, causal=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(tokens, d_model))
    ws = rng.normal(size=(4, d_model, d_model)) / math.sqrt(d_model)
    mask = kernels.causal_mask(tokens) if causal else None
    return kernels.multi_head_attention(x, *ws, heads=heads, mask=mask)


def test_multi_head_default_shows_every_head_side_by_side_with_exact_weights(client):
    response = client.get(url("multi-head"), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    body = text(response)
    assert "2 heads of width d_model / h = 4 over 5 tokens" in body
    assert "The four projections hold 256 numbers, whatever h is." in body
    assert "Head 1: columns 0–3 of Q, K and V" in body
    assert "Head 2: columns 4–7 of Q, K and V" in body
    assert html.count('<div class="head">') == 2
    out, weights = _reference()
    first_head = re.search(r'<div class="head">(.*?)</div></div>', html, re.S).group(1)
    expected = []
    for row in weights[0]:
        expected += [f"{w:.2f}" for w in row] + ["1.000000"]
    assert cells(first_head) == expected
    assert f"{out[0, 0]:.3f}".replace("-", "−") in body


def test_multi_head_causal_mask_zeroes_every_heads_upper_triangle(client):
    response = client.get(url("multi-head", causal="on", heads=4, tokens=4), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "with a causal mask" in text(response)
    heads = re.findall(r'<div class="head">(.*?)</div></div>', html, re.S)
    assert len(heads) == 4
    for head in heads:
        values = cells(head)
        rows = [values[i * 5 : i * 5 + 4] for i in range(4)]  # 4 weights and a row sum each
        for i, row in enumerate(rows):
            assert row[i + 1 :] == ["0.00"] * (3 - i)
        assert rows[0][0] == "1.00"  # the first token can only look at itself


def test_multi_head_one_head_is_plain_attention_width(client):
    response = client.get(url("multi-head", heads=1, d_model=6), **HTMX)
    assert response.status_code == 200
    assert "1 head of width d_model / h = 6" in text(response)


# --- Adam vs AdamW ------------------------------------------------------------------------------


def test_adamw_default_flat_objective_shows_pure_decay(client):
    response = client.get(url("adamw"), **HTMX)
    assert response.status_code == 200
    body = text(response)
    # θ₀ = 1, η = 0.01, λ = 0.1, 200 steps: AdamW is 0.999^200 = 0.8186; Adam never moves.
    assert (
        "After 200 steps on f(θ) = 0 with λ = 0.1: Adam ends at 1.0000, Adam with L2 at 0.0156, "
        "AdamW at 0.8186." in body
    )
    assert f"{0.999**200:.4f}" == "0.8186"
    assert "1 − ηλ = 0.999000" in body
    html = response.content.decode()
    assert html.count("<polyline") == 3
    for css in ("line-adam", "line-raw", "line-sgd"):
        assert f'class="{css}"' in html


def test_adamw_first_step_on_a_bowl_by_hand(client):
    response = client.get(url("adamw", objective="square", steps=10), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    step_one = re.search(r'<th scope="row">1</th>(.*?)</tr>', html).group(1)
    # Adam's first step is η · sign(g) = 0.01; AdamW also shrinks first: 1 · 0.999 − 0.01.
    assert cells(step_one) == ["0.9900", "0.9900", "0.9890"]
    theta, _m, _v = kernels.adamw(lambda t: 2.0 * t, 1.0, 10, lr=0.01, weight_decay=0.1)
    assert f"AdamW at {theta[-1]:.4f}." in text(response)


def test_adamw_without_decay_all_three_agree(client):
    response = client.get(url("adamw", objective="quartic", weight_decay=0), **HTMX)
    assert response.status_code == 200
    final = re.search(
        r"Adam ends at (\S+), Adam with L2 at (\S+), AdamW at (\S+)\.", text(response)
    )
    assert final.group(1) == final.group(2) == final.group(3)


# --- bad input, caps and the page without JavaScript ---------------------------------------------


@pytest.mark.parametrize(
    ("key", "params", "expected"),
    [
        ("cross-entropy", {"logits": "a b"}, "“a” is not a number."),
        ("cross-entropy", {"logits": " ".join(["1"] * 33)}, "Enter 1 to 32 numbers"),
        ("cross-entropy", {"logits": "1 nan"}, "must be a finite number"),
        ("cross-entropy", {"target": "-1"}, "Enter a whole number from 0 to 31."),
        ("cross-entropy", {"logits": "1 2", "target": "2"}, "Enter a class from 0 to 1"),
        ("multi-head", {"tokens": "17"}, "Enter a whole number from 1 to 16."),
        ("multi-head", {"heads": "9"}, "Enter a whole number from 1 to 8."),
        ("multi-head", {"heads": "3"}, "heads must divide d_model = 8 evenly"),
        ("multi-head", {"d_model": "257"}, "Enter a whole number from 1 to 256."),
        ("adamw", {"weight_decay": "2"}, "Enter a number from 0 to 1."),
        ("adamw", {"lr": "nan"}, "Enter a number from 1e-06 to 1."),
        ("adamw", {"steps": "5001"}, "Enter a whole number from 1 to 5,000."),
        ("adamw", {"objective": "cubic"}, "Choose θ² (square), θ⁴ (quartic) or 0 (flat)."),
    ],
)
def test_track_widget_bad_input_is_a_400_fragment_naming_the_problem(client, key, params, expected):
    response = client.get(url(key, **params), **HTMX)
    assert response.status_code == 400
    html = response.content.decode()
    assert "widget-errors" in html and "<html" not in html
    assert expected in html


@pytest.mark.parametrize(
    ("key", "params"),
    [
        ("cross-entropy", {"logits": " ".join(str(i) for i in range(32)), "target": "31"}),
        ("multi-head", {"tokens": "16", "d_model": "256", "heads": "8", "causal": "on"}),
        ("adamw", {"steps": "5000", "objective": "quartic", "theta0": "100", "lr": "1"}),
    ],
)
def test_track_widget_largest_allowed_input_is_computed(client, key, params):
    response = client.get(url(key, **params), **HTMX)
    assert response.status_code == 200
    assert "widget-summary" in response.content.decode()


@pytest.mark.parametrize("key", ["cross-entropy", "multi-head", "adamw"])
def test_track_widget_oversize_query_is_refused(client, key):
    response = client.get(url(key) + "?" + "&".join(f"x{i}=1" for i in range(41)), **HTMX)
    assert response.status_code == 400
    assert "The request is too large" in response.content.decode()


@pytest.mark.parametrize(
    ("key", "params", "expected"),
    [
        ("cross-entropy", {"target": "7"}, "Enter a class from 0 to 2"),
        ("multi-head", {"heads": "5"}, "heads must divide d_model = 8 evenly"),
        ("adamw", {"steps": "0"}, "Enter a whole number from 1 to 5,000."),
    ],
)
def test_track_widget_without_javascript_gets_the_full_page(client, key, params, expected):
    response = client.get(url(key, **params))
    assert response.status_code == 400
    html = response.content.decode()
    assert "<html" in html and 'method="get"' in html and f'data-widget="{key}"' in html
    assert expected in html
    good = client.get(url(key))
    assert good.status_code == 200 and "<html" in good.content.decode()
    assert "widget-summary" in good.content.decode()


# --- attached to the chapters --------------------------------------------------------------------


def test_track_widgets_are_attached_to_their_chapters_equations(client, demo_course):
    attached = {
        (e.chapter.slug, e.title, e.widget)
        for e in Equation.objects.filter(widget__in=["cross-entropy", "multi-head", "adamw"])
    }
    assert attached == {
        ("log-softmax-cross-entropy", "The gradient with respect to the logits", "cross-entropy"),
        ("multi-head-attention", "Join the heads and project", "multi-head"),
        ("adam-and-adamw", "The AdamW step", "adamw"),
    }
    for slug, key in [
        ("log-softmax-cross-entropy", "cross-entropy"),
        ("multi-head-attention", "multi-head"),
        ("adam-and-adamw", "adamw"),
    ]:
        equation = Equation.objects.filter(chapter__slug=slug, widget=key).first()
        html = client.get(equation.chapter.get_absolute_url()).content.decode()
        assert f'id="embed-{key}-result"' in html
        assert f'action="{reverse("widgets:" + key)}"' in html

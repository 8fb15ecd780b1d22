"""Widget endpoints through the test client: results, shapes, errors, limits, caching, embeds."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from django.http import Http404
from django.template import Context, Template
from django.test import RequestFactory
from django.urls import resolve, reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.widgets_baseline import without_computation
from courses.widgets import kernels, views
from courses.widgets.registry import WIDGETS, defaults
from platform.rendering import render_math

HTMX = {"HTTP_HX_REQUEST": "true"}
KEYS = ["attention", "softmax", "norms", "adam", "rope", "cross-entropy", "multi-head", "adamw"]
INLINE_STYLE = re.compile(r"\sstyle\s*=", re.IGNORECASE)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)

pytestmark = pytest.mark.django_db


def url(key: str, **params) -> str:
    from django.utils.http import urlencode

    return reverse(f"widgets:{key}") + ("?" + urlencode(params) if params else "")


def assert_csp_clean(html: str) -> None:
    assert INLINE_STYLE.search(html) is None
    assert INLINE_SCRIPT.search(html) is None
    assert " hx-on" not in html


# --- every endpoint, valid input ------------------------------------------------------------


@pytest.mark.parametrize("key", KEYS)
def test_widget_page_renders_form_and_default_result(client, key):
    response = client.get(url(key))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html
    assert f'data-widget="{key}"' in html
    assert f'hx-get="{reverse("widgets:" + key)}"' in html
    assert 'hx-trigger="input changed delay:400ms, submit"' in html
    assert f'action="{reverse("widgets:" + key)}"' in html and 'method="get"' in html
    assert "widget-summary" in html
    assert "courses/widgets.css" in html and "courses/widgets.js" in html
    assert_csp_clean(html)


@pytest.mark.parametrize("key", KEYS)
def test_widget_htmx_request_returns_only_the_result_fragment(client, key):
    response = client.get(url(key, **defaults(WIDGETS[key].form)), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and "<form" not in html
    assert "widget-summary" in html
    assert_csp_clean(html)


@pytest.mark.parametrize("key", KEYS)
def test_widget_fragments_are_publicly_cacheable_and_vary_on_hx_request(client, key):
    fragment = client.get(url(key), **HTMX)
    assert fragment["Cache-Control"] == "public, max-age=86400"
    assert "HX-Request" in fragment["Vary"]
    assert "Cookie" not in fragment["Vary"]
    assert "Set-Cookie" not in str(fragment.headers)
    page = client.get(url(key))
    assert "HX-Request" in page["Vary"]
    assert page["Cache-Control"] == "private, max-age=60"  # it carries the visitor's CSRF token


def test_attention_default_is_the_seed_chapter_example(client):
    response = client.get(url("attention"), **HTMX)
    html = response.content.decode()
    assert "4 tokens at " + render_math(r"\tau") + " = 1.00" in html  # symbols typeset, not d_k
    assert "every row of the weights sums to 1" in html
    for name, shape in [
        (render_math("Q"), "4 × 8"),
        (render_math("K"), "4 × 8"),
        (render_math("V"), "4 × 8"),
        (f"output = weights {render_math('V')}", "4 × 8"),
    ]:
        assert f"<dt>{name}</dt><dd>{shape}</dd>" in html
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4, 8))
    _out, w = kernels.attention(Q, K, V)
    assert f">{w[0, 0]:.3f}</td>" in html
    assert html.count('<td class="row-sum">1.000000</td>') == 4


def test_attention_heatmap_uses_ten_css_classes_not_inline_styles(client):
    html = client.get(url("attention", tokens=6, causal="on"), **HTMX).content.decode()
    classes = set(re.findall(r'class="(heat-\d)"', html))
    assert classes and classes <= {f"heat-{i}" for i in range(10)}
    assert '<td class="masked">' in html  # masked scores are drawn as masked, not as numbers
    css = __import__("pathlib").Path("courses/static/courses/widgets.css").read_text()
    for i in range(10):
        assert f".heat-{i} {{" in css


def test_attention_causal_mask_zeroes_the_upper_triangle():
    result = WIDGETS["attention"].compute(
        {"tokens": 5, "d_k": 4, "d_v": 3, "seed": 1, "temperature": 1.0, "causal": True}
    )
    html = str(result["weights_table"])
    first_row = re.search(r'<tr><th scope="row">0</th>(.*?)</tr>', html).group(1)
    # A masked weight is not a tiny weight: hatched cells with no number, and the legend.
    assert first_row.count('<td class="masked">') == 4 and ">1.000</td>" in first_row
    assert ">0.000</td>" not in first_row
    assert html.count('<td class="masked">') == 10  # the upper triangle of 5 × 5
    assert "masked (hatched): −∞ → 0" in html


def test_attention_without_mask_has_no_masked_cells_or_legend():
    result = WIDGETS["attention"].compute(
        {"tokens": 5, "d_k": 4, "d_v": 3, "seed": 1, "temperature": 1.0, "causal": False}
    )
    assert "masked" not in str(result["weights_table"]) + str(result["scores_table"])


def test_attention_entropy_table_shows_the_divisor_matters(client):
    result = WIDGETS["attention"].compute(
        {"tokens": 16, "d_k": 8, "d_v": 8, "seed": 0, "temperature": 1.0, "causal": False}
    )
    rows = {r["d_k"]: r for r in result["entropy_rows"]}
    assert sorted(rows) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert rows[8]["current"]
    # Without the divisor, entropy collapses as d_k grows; with it, it stays well above.
    assert rows[256]["without"] < 0.5 * rows[256]["with"]
    assert rows[256]["with"] > 0.5 * result["max_entropy"]


def test_attention_typed_matrices_replace_the_random_ones(client):
    html = client.get(
        url("attention", tokens=2, d_k=2, d_v=1, q="1 0\n0 1", k="1 0; 0 1", v="10\n20"), **HTMX
    ).content.decode()
    assert "typed Q, K, V" in html
    w = kernels.softmax(np.eye(2) / np.sqrt(2))
    assert f">{(w @ [10, 20])[0]:.3f}</td>" in html


def test_attention_largest_input_is_allowed(client):
    response = client.get(
        url("attention", tokens=64, d_k=256, d_v=256, temperature=0.05, causal="on"), **HTMX
    )
    assert response.status_code == 200
    assert "(first 16 of 64 rows and 16 of 256 columns)" in response.content.decode()


def test_attention_at_the_caps_is_a_heat_map_and_first_rows_not_every_number(client):
    response = client.get(
        url("attention", tokens=64, d_k=256, d_v=256, temperature=1.0, causal="on"), **HTMX
    )
    html = response.content.decode()
    # All 64 × 64 weights as coloured squares (masked ones hatched), numbers for the first rows.
    assert html.count('<svg class="heat-map" viewBox="0 0 64 64"') == 1
    assert re.search(r'<path fill="url\(#hmh-[0-9a-f]{10}\)" d="M1 0h63v1h-63z', html)
    weights = html.split("Attention weights (darker")[1].split("</table>")[0]
    assert weights.count("<tr>") == 16 + 1  # header row and the first 16 token rows
    assert "(first 16 of 64 rows and 16 of 64 columns)" in weights
    assert len(response.content) < 48_000  # it was 216 KB, most of it unreadable numbers
    assert "format=csv&amp;matrix=weights" in html


def test_attention_small_input_has_no_heat_map_and_full_tables(client):
    html = client.get(url("attention", tokens=4), **HTMX).content.decode()
    assert "heat-map" not in html
    assert "first 16 of" not in html


def test_attention_csv_download_has_every_number_of_the_matrix(client):
    params = {"tokens": 64, "d_k": 256, "d_v": 32, "seed": 3, "causal": "on"}
    response = client.get(url("attention", format="csv", matrix="weights", **params))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="attention-weights.csv"'
    rows = response.content.decode().splitlines()
    assert rows[0].split(",") == ["row", *map(str, range(64))]
    assert len(rows) == 1 + 64
    values = np.array([[float(v) for v in row.split(",")[1:]] for row in rows[1:]])
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(64, 256)), rng.normal(size=(64, 256)), rng.normal(size=(64, 32))
    expected = kernels.attention(Q, K, V, mask=kernels.causal_mask(64))[1]
    assert np.array_equal(values, expected)  # full precision, not the table's 3 digits
    output = client.get(url("attention", format="csv", matrix="out", **params))
    assert len(output.content.decode().splitlines()[1].split(",")) == 1 + 32


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"matrix": "secrets"}, "matrix must be one of: weights, scores, out."),
        ({"matrix": "weights", "tokens": 65}, "tokens"),
        ({"matrix": "weights", "tokens": "x"}, "tokens"),
    ],
)
def test_attention_csv_bad_request_says_why(client, params, message):
    response = client.get(url("attention", format="csv", **params))
    assert response.status_code == 400
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert message in response.content.decode()


def test_widgets_without_downloads_refuse_csv(client):
    response = client.get(url("softmax", format="csv", matrix="weights"))
    assert response.status_code == 400
    assert "matrix must be one of: none." in response.content.decode()


def test_softmax_temperature_moves_from_argmax_to_uniform(client):
    cold = client.get(url("softmax", logits="2 1 0.5", temperature=0.01), **HTMX)
    hot = client.get(url("softmax", logits="2 1 0.5", temperature=20), **HTMX)
    x0 = render_math("x_{0}")
    assert f"the largest logit ({x0}) gets 1.000" in cold.content.decode()
    top = kernels.softmax([2, 1, 0.5], temperature=20).max()
    assert f"the largest logit ({x0}) gets {top:.3f}" in hot.content.decode()
    assert abs(top - 1 / 3) < 0.02
    assert '<rect class="bar"' in hot.content.decode()


def test_norms_show_both_outputs_with_mean_and_std(client):
    html = client.get(url("norms", x="2 4 6 8"), **HTMX).content.decode()
    assert "Layer norm output: mean 0.0000, std 1.0000" in html
    for v in ("−1.3416", "−0.4472", "0.4472", "1.3416"):
        assert f"<td>{v}</td>" in html
    rms = kernels.rms_norm([2, 4, 6, 8])
    assert f"<td>{rms[0]:.4f}</td>" in html


def test_norms_gamma_beta_eps_are_applied(client):
    html = client.get(url("norms", x="1 3", gamma=2, beta=1, eps=1), **HTMX).content.decode()
    expected = kernels.layer_norm([1, 3], gamma=2, beta=1, eps=1)
    assert f"<td>{expected[0]:.4f}</td>".replace("-", "−") in html


def test_adam_plot_and_table_with_and_without_bias_correction(client):
    html = client.get(url("adam"), **HTMX).content.decode()
    assert "Adam ends at −0.0001" in html
    assert html.count("<polyline") == 3
    assert 'class="line-adam"' in html and 'class="line-raw"' in html and 'class="line-sgd"' in html
    assert '<div class="plot-box" role="img" aria-label="θ over 200 steps' in html
    assert '<svg class="plot" viewBox="0 0 640 280" preserveAspectRatio="none"' in html
    assert "<caption>" + render_math(r"\theta") + " at selected steps</caption>" in html
    assert "= 3.162" in html  # (1 − β1)/√(1 − β2) at the default betas


def test_adam_quartic_objective_shows_sgd_diverging(client):
    html = client.get(url("adam", objective="quartic", steps=5000), **HTMX).content.decode()
    assert "SGD diverged at step" in html
    assert html.count("<polyline") == 3


def test_rope_right_way_depends_only_on_offset_and_wrong_way_does_not(client):
    html = client.get(url("rope", d_k=8, heads=2, positions="0 1 2 3 5 8"), **HTMX).content
    rows = re.findall(
        r"<tr><th scope=\"row\">(\d+)</th><td>(\d+)</td><td>([\d.e+−-]+)</td><td>([\d.]+)</td>",
        html.decode(),
    )
    offsets = {int(off): (float(right), float(wrong)) for off, _n, right, wrong in rows}
    assert max(r for r, _w in offsets.values()) < 1e-12
    assert max(w for _r, w in offsets.values()) > 1e-3


def test_rope_with_one_head_both_ways_agree(client):
    html = client.get(url("rope", heads=1), **HTMX).content.decode()
    assert "with one head there is no other head" in html


def test_widgets_index_lists_every_widget_the_explorer_and_the_seven_questions(client):
    html = client.get(reverse("widgets:index")).content.decode()
    for key in KEYS:
        assert f'href="{reverse("widgets:" + key)}"' in html
    assert reverse("widgets:explorer") in html and reverse("widgets:walkthrough") in html


@pytest.mark.parametrize("key", KEYS)
def test_registry_routes_each_widget_url_to_the_one_widget_view(key):
    assert list(WIDGETS) == KEYS
    match = resolve(f"/widgets/{key}/")
    assert match.func is views.widget
    assert match.kwargs == {"key": key}
    assert match.view_name == f"widgets:{key}"


def test_registry_unknown_widget_key_is_a_404(client, rf: RequestFactory):
    assert client.get("/widgets/nope/").status_code == 404
    with pytest.raises(Http404):
        views.widget(rf.get("/widgets/nope/"), key="nope")


# --- bad input: 400 fragments that name the field and the range -----------------------------


@pytest.mark.parametrize(
    ("key", "params", "expected"),
    [
        (
            "attention",
            {"tokens": "abc"},
            "<strong>tokens</strong>: Enter a whole number from 1 to 64.",
        ),
        (
            "attention",
            {"tokens": "65"},
            "<strong>tokens</strong>: Enter a whole number from 1 to 64.",
        ),
        (
            "attention",
            {"d_k": "257"},
            "</math> (key width)</strong>: Enter a whole number from 1 to 256.",
        ),
        (
            "attention",
            {"temperature": "nan"},
            "<strong>temperature τ</strong>: Enter a number from 0.05 to 10.",
        ),
        (
            "attention",
            {"temperature": "inf"},
            "<strong>temperature τ</strong>: Enter a number from 0.05 to 10.",
        ),
        (
            "attention",
            {"tokens": "2", "d_k": "2", "q": "1 2 3"},
            "does not match tokens × d_k = 2 × 2",
        ),
        ("attention", {"q": "1 2\n3"}, "Every row must have the same number of entries."),
        ("attention", {"q": "1 nan"}, "must be a finite number"),
        ("attention", {"q": "x" * 5000}, "at most 4,000 characters"),
        ("softmax", {"logits": ""}, "<strong>logits</strong>: Enter 1 to 32 numbers"),
        ("softmax", {"logits": "1 two 3"}, "“two” is not a number."),
        ("softmax", {"logits": "1 1e400"}, "must be a finite number"),
        ("softmax", {"temperature": "0"}, "Enter a number from 0.01 to 20."),
        ("norms", {"x": " ".join(["1"] * 257)}, "Enter 1 to 256 numbers"),
        ("norms", {"eps": "-1"}, "<strong>ε</strong>: Enter a number from 1e-12 to 10."),
        (
            "adam",
            {"steps": "5001"},
            "<strong>steps</strong>: Enter a whole number from 1 to 5,000.",
        ),
        (
            "adam",
            {"steps": "9" * 5000},
            "<strong>steps</strong>: Enter a whole number from 1 to 5,000.",
        ),
        ("adam", {"objective": "rosenbrock"}, "Choose θ² (square) or θ⁴ (quartic)."),
        ("adam", {"beta1": "1"}, "Enter a number from 0 to 0.999."),
        ("rope", {"d_k": "7"}, "Enter an even whole number from 2 to 256"),
        ("rope", {"d_k": "128", "heads": "4"}, "heads × d_k must be at most 256"),
        ("rope", {"positions": "0 1.5"}, "Positions must be whole numbers from 0 to 100,000."),
    ],
)
def test_widget_bad_input_gets_a_400_fragment_naming_the_field(client, key, params, expected):
    response = client.get(url(key, **params), **HTMX)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="widget-errors" role="alert"' in html
    assert expected in html


def test_widget_bad_input_without_javascript_gets_the_full_page_with_errors(client):
    response = client.get(url("attention", tokens="lots"))
    assert response.status_code == 400
    html = response.content.decode()
    assert "<html" in html and "<form" in html
    assert "Enter a whole number from 1 to 64." in html
    assert 'value="lots"' in html  # the learner's input is kept to be fixed


def test_widget_oversize_query_string_is_refused_before_any_work(client):
    response = client.get(url("attention") + "?q=" + "1" * 20000, **HTMX)
    assert response.status_code == 400
    assert "The request is too large: at most 16,384 characters" in response.content.decode()
    many = "&".join(f"f{i}=1" for i in range(100))
    assert client.get(url("softmax") + "?" + many, **HTMX).status_code == 400


def test_widget_missing_fields_fall_back_to_defaults(client):
    response = client.get(url("attention", tokens=3), **HTMX)
    assert response.status_code == 200
    assert "3 tokens" in response.content.decode()


@pytest.mark.parametrize("key", KEYS)
def test_widget_endpoints_refuse_post(client, key):
    assert client.post(url(key)).status_code == 405


# --- fuzz: nothing but 200 or 400 --------------------------------------------------------------

NASTY = [
    "", " ", "nan", "NaN", "inf", "-inf", "1e309", "-1e309", "1e-400", "0", "-0", "9" * 400,
    "1,2", "0x10", "1_000", "½", "\x00", "\u202e", "1 2 3", "1\n2\n3", ";", "--", "%00", "64",
    "256", "5000", "257", "65", "5001", "-1", "3.5", "1e3", "true", "on",
]  # fmt: skip
values = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=40),
    st.integers(-(10**12), 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


@pytest.mark.parametrize("key", KEYS)
def test_widget_fuzz_sees_only_200_or_400(client, key):
    fields = [*WIDGETS[key].form.base_fields, "unknown"]

    @settings(
        max_examples=35,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.dictionaries(st.sampled_from(fields), values, max_size=len(fields)), st.booleans())
    def run(params, htmx):
        response = client.get(url(key, **params), **(HTMX if htmx else {}))
        assert response.status_code in (200, 400), (params, response.content[:500])
        if response.status_code == 400:
            assert b"widget-errors" in response.content

    run()


# --- benchmark baseline and embeds -------------------------------------------------------------


def test_bench_baseline_serves_the_same_fragment_computing_each_input_once(client, monkeypatch):
    normal = client.get(url("adam", steps=50), **HTMX).content
    calls = []
    real = WIDGETS["adam"].numbers

    def counted(data):
        calls.append(data["steps"])
        return real(data)

    monkeypatch.setitem(WIDGETS, "adam", dataclasses.replace(WIDGETS["adam"], numbers=counted))
    for key, baseline in without_computation(WIDGETS).items():
        monkeypatch.setitem(WIDGETS, key, baseline)
    first = client.get(url("adam", steps=50), **HTMX)
    second = client.get(url("adam", steps=50), **HTMX)
    assert first.content == second.content == normal
    assert calls == [50]  # the second request reused the numbers
    bad = client.get(url("adam", steps=0), **HTMX)
    assert bad.status_code == 400  # validation still runs in the baseline
    assert calls == [50]


def test_widget_embed_tag_renders_form_and_result_with_unique_ids(rf: RequestFactory):
    request = rf.get("/courses/x/y/")
    from django.contrib.auth.models import AnonymousUser

    request.user = AnonymousUser()
    template = Template(
        '{% load widget_tags %}{% widget_embed "attention" %}{% widget_embed "attention" %}'
        '{% widget_embed "adam" %}{% widget_embed "nope" %}'
    )
    html = template.render(Context({"request": request}))
    assert 'hx-target="#embed-attention-result"' in html
    assert 'id="embed-attention-result"' in html
    assert 'hx-target="#embed-attention-2-result"' in html
    assert 'id="embed-adam-result"' in html
    assert "courses/widgets.css" not in html  # the chapter's <head> links the assets
    assert 'action="/widgets/attention/"' in html
    assert "every row of the weights sums to 1" in html
    assert "Adam ends at −0.0001" in html
    assert "Unknown widget “nope”." in html
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    assert_csp_clean(html)

"""The notation explorer: every equation of both seed pages decodes, renders and is named."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.http import urlencode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from courses.contentfiles import DEFAULT_DIR, GLOSSARY_FILE, parse_glossary
from courses.models import Symbol
from courses.widgets.explorer import decode, tokenize
from platform.rendering import render_math
from tests.support.mathml import without_tex_source

from ..factories import SymbolFactory

GLOSSARY = parse_glossary(DEFAULT_DIR / GLOSSARY_FILE)
HTMX = {"HTTP_HX_REQUEST": "true"}

# Every formula the product must publish: the capstone chapter's and the notebook's, as LaTeX and
# as Unicode pasted from a paper.
SEED_CHAPTER = [
    r"\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}"
    r"{\sqrt{d_k}}\right)V",
    r"m_t = \beta_1 m_{t-1} + (1 - \beta_1)\,g_t, \qquad v_t = \beta_2 v_{t-1} + "
    r"(1 - \beta_2)\,g_t^2",
    r"\hat{m}_t = \frac{m_t}{1 - \beta_1^{\,t}}, \quad \hat{v}_t = \frac{v_t}{1 - \beta_2^{\,t}},"
    r" \qquad \theta_t = \theta_{t-1} - \eta\,\frac{\hat{m}_t}{\sqrt{\hat{v}_t} + \epsilon}",
    r"\operatorname{LN}(\mathbf{x}) = \boldsymbol{\gamma} \odot \frac{\mathbf{x} - \mu}"
    r"{\sqrt{\sigma^2 + \epsilon}} + \boldsymbol{\beta}, \quad \mu = \frac{1}{d}\sum_{i} x_i, "
    r"\quad \sigma^2 = \frac{1}{d}\sum_{i}(x_i - \mu)^2",
]
SEED_NOTEBOOK = [
    r"\mathbb{E}[(y - \hat{f}(x))^2] = \underbrace{(\mathbb{E}[\hat{f}(x)] - f(x))^2}"
    r"_{\text{bias}^2} + \underbrace{\text{Var}(\hat{f}(x))}_{\text{variance}} + "
    r"\underbrace{\sigma^2}_{\text{noise}}",
    r"y = f(g(x)), \quad \frac{\partial y}{\partial x} = \frac{\partial f}{\partial g} \cdot "
    r"\frac{\partial g}{\partial x}",
    r"A = Q \Lambda Q^{-1} \quad\Rightarrow\quad A^t = Q \Lambda^t Q^{-1}",
    r"x_{t+1} = Ax_t",
    r"\mathbb{E}[f(X)] \geq f(\mathbb{E}[X])",
    r"\mathbb{E}[f(X)] \leq f(\mathbb{E}[X])",
    r"\log \mathbb{E}[\cdot]",
    r"\mathbb{E}[\log \cdot]",
    r"\arg\max_\theta \sum_i \log p_\theta(y_i \mid x_i) \;=\; \arg\min_\theta \;-\frac{1}{N}"
    r"\sum_i \log p_\theta(y_i \mid x_i)",
    r"\text{softmax}(x_i; \tau) = \frac{e^{x_i / \tau}}{\sum_j e^{x_j / \tau}}",
    r"A = U \Sigma V^T",
]
# The same pages also write formulas in Unicode, in running text.
SEED_UNICODE = [
    "QKᵀ",
    "√d_k",
    "A = QΛQ⁻¹",
    "ρ(A) = max|λᵢ|",
    "σ₁ ≥ σ₂ ≥ … ≥ 0",
    "⟨RoPE(q, m), RoPE(k, n)⟩",
    "⟨q_m, k_n⟩ = f(m−n)",
    "O(T²)",
    "τ → 0",
    "E[f(X)] ≤ f(E[X])",
    "d_ff ≈ (8/3) * d_model",
]
ALL_SEED = SEED_CHAPTER + SEED_NOTEBOOK + SEED_UNICODE
RAW_COMMAND = re.compile(r"\\[A-Za-z]+")


@pytest.fixture
def glossary(db):
    Symbol.objects.bulk_create(Symbol(**entry) for entry in GLOSSARY)
    return list(Symbol.objects.all())


def explorer_url(latex: str) -> str:
    return reverse("widgets:explorer") + "?" + urlencode({"latex": latex})


# --- the matcher ---------------------------------------------------------------------------------


@pytest.mark.parametrize("latex", ALL_SEED)
def test_decode_seed_equation_has_no_unknown_tokens(latex):
    decoded = decode(latex, GLOSSARY)
    assert decoded.unknown == []
    assert decoded.symbols


@pytest.mark.parametrize("latex", SEED_CHAPTER + SEED_NOTEBOOK)
def test_render_math_leaves_no_raw_command_in_seed_equations(latex):
    html = str(render_math(latex, display=True))
    assert html.startswith("<math")
    visible = without_tex_source(html)
    assert RAW_COMMAND.search(visible) is None, RAW_COMMAND.findall(visible)


def test_decode_attention_names_every_symbol_in_order():
    decoded = decode(SEED_CHAPTER[0], GLOSSARY)
    assert decoded.slugs == [
        "attention", "query", "key", "value", "softmax", "fraction", "transpose",
        "square-root", "d-k",
    ]  # fmt: skip
    assert {e.key for e in decoded.structure} == {"(", ",", ")", "="}
    by_key = {e.key: e for e in decoded.entries}
    assert by_key["query"].occurrences == ["Q", "Q"]
    assert by_key["transpose"].occurrences == [r"^\top"]


def test_decode_longest_token_wins_and_braces_are_balanced():
    decoded = decode(SEED_CHAPTER[1], GLOSSARY)
    by_key = {e.key: e for e in decoded.symbols}
    assert by_key["m-t"].occurrences == ["m_t", "m_{t-1}"]
    assert by_key["beta-1"].occurrences == [r"\beta_1", r"\beta_1"]
    assert "beta" not in by_key  # β₁ is not read as β followed by a subscript


def test_decode_latex_and_unicode_spellings_agree():
    latex = decode(r"\sqrt{d_k} \beta_1 \epsilon \odot", GLOSSARY).slugs
    unicode = decode("√dₖ β₁ ε ⊙", GLOSSARY).slugs
    assert latex == unicode == ["square-root", "d-k", "beta-1", "epsilon", "hadamard"]


def test_decode_lists_unknown_tokens_for_editors():
    decoded = decode(r"\zeta + \Xi_k + ⨁", GLOSSARY)
    assert [e.key for e in decoded.unknown] == [r"\zeta", r"\Xi", "⨁"]


def test_decode_ignores_spacing_and_sizing():
    decoded = decode(r"\left( a \qquad b \, \right)", GLOSSARY)
    keys = [e.key for e in decoded.entries]
    assert r"\qquad" not in keys and r"\," not in keys and r"\left" not in keys
    assert keys[0] == "("


def test_decode_recognises_words_only_when_the_glossary_knows_them():
    assert [t.key for t in tokenize("softmax", frozenset({"softmax"}))] == ["softmax"]
    # A word the glossary does not know is prose, not seven letters (d → dimension, e → Euler).
    assert [t.key for t in tokenize("softmax", frozenset())] == []
    assert [t.key for t in tokenize("x_{softmax}", frozenset())] == ["x", "_", "softmax"]
    assert [t.key for t in tokenize("QK", frozenset({"softmax"}))] == ["Q", "K"]


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_decode_any_text_never_fails(text):
    decoded = decode(text, GLOSSARY)
    for entry in decoded.entries:
        assert entry.occurrences


# --- the Decode box view ------------------------------------------------------------------------


@pytest.mark.parametrize("latex", ALL_SEED)
def test_explorer_view_decodes_every_seed_equation(client, glossary, latex):
    response = client.get(explorer_url(latex), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert '<div class="rendered-equation"><math display="block" alttext=' in html
    math = without_tex_source(html[html.index("<math") : html.index("</math>")])
    assert RAW_COMMAND.search(math) is None
    assert ", 0 unknown." in html
    assert 'class="badge badge-warn">unknown' not in html


def test_explorer_view_shows_glossary_explanations_and_unknowns(client, glossary):
    html = client.get(explorer_url(r"\sqrt{d_k} + \zeta"), **HTMX).content.decode()
    assert "<strong>square root</strong>" in html
    sqrt = Symbol.objects.get(slug="square-root")
    assert sqrt.explanation.split(".")[0][:40] in html
    assert "<math" in html  # the explanation's $math$ is typeset too
    assert 'class="badge badge-warn">unknown</strong>' in html
    assert "<code>\\zeta</code>" in html
    assert "1 unknown." in html


def test_explorer_view_full_page_without_javascript(client, glossary):
    response = client.get(explorer_url("QKᵀ/√d_k"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<form" in html and "Decode" in html and "<strong>transpose</strong>" in html
    assert "Read it with the seven questions" in html
    assert reverse("widgets:walkthrough") + "?latex=" in html


def test_explorer_view_empty_form(client, glossary):
    response = client.get(reverse("widgets:explorer"))
    assert response.status_code == 200
    assert "rendered-equation" not in response.content.decode()


@pytest.mark.parametrize(
    ("latex", "message"),
    [
        ("", "Paste an equation: 1 to 2,000 characters"),
        ("x" * 2001, "Too long: paste at most 2,000 characters."),
    ],
)
def test_explorer_view_rejects_empty_and_oversize_input(client, glossary, latex, message):
    response = client.get(explorer_url(latex), **HTMX)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_explorer_view_oversize_query_string_is_400(client, glossary):
    response = client.get(reverse("widgets:explorer") + "?latex=" + "x" * 20000, **HTMX)
    assert response.status_code == 400


def test_explorer_view_is_cacheable_and_varies_on_hx_request(client, glossary):
    response = client.get(explorer_url("x^2"), **HTMX)
    assert response["Cache-Control"] == "public, max-age=300"
    assert "HX-Request" in response["Vary"]


def test_explorer_view_runs_a_constant_number_of_queries(client, db):
    def count(n_symbols: int) -> int:
        Symbol.objects.all().delete()
        SymbolFactory.create_batch(n_symbols)
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(explorer_url(SEED_CHAPTER[3]), **HTMX).status_code == 200
        return len(ctx.captured_queries)

    assert count(1) == count(50) == 1


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.text(max_size=120))
def test_explorer_view_fuzz_sees_only_200_or_400(client, glossary, text):
    response = client.get(explorer_url(text), **HTMX)
    assert response.status_code in (200, 400)

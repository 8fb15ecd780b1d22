"""Site search at /search/: every kind, published only, grouped, snippets safe, queries bounded.

Runs on SQLite (the icontains fallback) by default; with DATABASE_URL=postgres://… the same
tests run against PostgreSQL full-text search, plus the ranking and headline tests.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from courses.models import Equation
from platform.search import MAX_QUERY_LENGTH, PER_GROUP, PER_PAGE, clean_query, search
from tests.courses.factories import (
    ChapterFactory,
    CourseFactory,
    EquationFactory,
    EquationPartFactory,
    SymbolFactory,
)
from tests.notebook.factories import NoteFactory

pytestmark = pytest.mark.django_db

SEARCH = reverse("search")
on_postgres = pytest.mark.skipif(not settings.ON_POSTGRES, reason="PostgreSQL full text search")
on_sqlite = pytest.mark.skipif(settings.ON_POSTGRES, reason="the SQLite fallback")


def _found(response) -> dict[str, list[str]]:
    return {group.kind: [hit.title for hit in group.hits] for group in response.context["groups"]}


def _counts(response) -> dict[str, int]:
    return {group.kind: group.count for group in response.context["groups"]}


@pytest.fixture
def content():
    chapter = ChapterFactory(
        title="Layer normalisation",
        summary="Centre and scale each row.",
        idea="Divide by the standard deviation plus a small epsilon.",
    )
    equation = EquationFactory(
        chapter=chapter,
        title="The layer norm",
        latex=r"y = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}",
    )
    EquationPartFactory(equation=equation, latex=r"\epsilon", reason="Keeps the division safe.")
    symbol = SymbolFactory(name="epsilon", glyph="ε", latex=r"\epsilon", explanation="A nudge.")
    note = NoteFactory(title="Where epsilon goes", summary="Inside the root.", body="Adam too.")
    hidden_course = CourseFactory(published=False)
    ChapterFactory(course=hidden_course, title="Epsilon in a hidden course")
    ChapterFactory(title="Epsilon draft", published=False)
    EquationFactory(chapter=ChapterFactory(published=False), title="Hidden", latex=r"\epsilon")
    NoteFactory(title="Epsilon draft note", published=False)
    return {"chapter": chapter, "equation": equation, "symbol": symbol, "note": note}


def test_search_finds_every_kind_and_only_published_content(client, content):
    response = client.get(SEARCH, {"q": "epsilon"})
    assert response.status_code == 200
    assert _found(response) == {
        "chapters": ["Layer normalisation"],
        "equations": ["The layer norm"],
        "symbols": ["epsilon"],
        "notes": ["Where epsilon goes"],
    }
    assert _counts(response) == {"chapters": 1, "equations": 1, "symbols": 1, "notes": 1}
    body = response.content.decode()
    assert "4 results for “epsilon”." in body
    assert f'href="{content["chapter"].get_absolute_url()}"' in body
    assert f'href="{content["equation"].get_absolute_url()}"' in body
    assert 'href="/widgets/explorer/?latex=%5Cepsilon"' in body
    assert f'href="{content["note"].get_absolute_url()}"' in body


def test_search_equation_snippet_is_the_formula_as_text(client, content):
    response = client.get(SEARCH, {"q": "sqrt"})
    [hit] = response.context["groups"][1].hits
    assert str(hit.snippet) == "y = (x - μ)/(√(σ^2 + ε))"
    response = client.get(SEARCH, {"q": "safe"})
    [hit] = response.context["groups"][1].hits
    assert str(hit.snippet) == "Keeps the division <mark>safe</mark>."


def test_search_equation_by_its_readable_text_and_part_reasons(client, content):
    readable = "y = (x - μ)/(√(σ^2 + ε))\nmu sqrt sigma epsilon"
    assert content["equation"].readable_text == readable
    assert _found(client.get(SEARCH, {"q": "sqrt"}))["equations"] == ["The layer norm"]
    assert _found(client.get(SEARCH, {"q": "division safe"}))["equations"] == ["The layer norm"]


def test_equation_readable_text_follows_its_latex(content):
    equation = content["equation"]
    equation.latex = r"\hat{m}_t"
    equation.save(update_fields=["latex"])
    assert Equation.objects.get(pk=equation.pk).readable_text == "m̂_t\nhat"


def test_search_every_word_must_match(client, content):
    assert _counts(client.get(SEARCH, {"q": "epsilon standard"})) == {
        "chapters": 1,
        "equations": 0,
        "symbols": 0,
        "notes": 0,
    }


def test_search_snippet_marks_the_match(client, content):
    response = client.get(SEARCH, {"q": "deviation"})
    [group] = [g for g in response.context["groups"] if g.kind == "chapters"]
    assert "<mark>deviation</mark>" in str(group.hits[0].snippet)
    assert "<mark>deviation</mark>" in response.content.decode()


def test_search_snippet_escapes_stored_html(client):
    NoteFactory(title="Payload", body='Rotary <script>alert("x")</script> <img src=x onerror=y>')
    response = client.get(SEARCH, {"q": "rotary"})
    body = response.content.decode()
    [hit] = response.context["groups"][3].hits
    assert "<script>" not in str(hit.snippet)
    assert "<img" not in str(hit.snippet)
    if not settings.ON_POSTGRES:  # ts_headline drops tags; the fallback shows them escaped
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in str(hit.snippet)
    assert "<mark>Rotary</mark>" in str(hit.snippet)
    assert "<script>alert" not in body


def test_search_groups_cap_and_link_to_all_of_a_kind(client):
    for i in range(PER_GROUP + 3):
        ChapterFactory(title=f"Softmax part {i}")
    response = client.get(SEARCH, {"q": "softmax"})
    assert _counts(response)["chapters"] == PER_GROUP + 3
    assert len(_found(response)["chapters"]) == PER_GROUP
    assert f"All {PER_GROUP + 3} chapters →" in response.content.decode()
    assert f'href="{SEARCH}?q=softmax&amp;kind=chapters"' in response.content.decode()


def test_search_one_kind_pages_through_it(client):
    for i in range(PER_PAGE + 4):
        NoteFactory(title=f"Softmax note {i}")
    first = client.get(SEARCH, {"q": "softmax", "kind": "notes"})
    assert [g.kind for g in first.context["groups"]] == ["notes"]
    assert len(_found(first)["notes"]) == PER_PAGE
    assert 'rel="next" href="?q=softmax&amp;kind=notes&amp;page=2"' in first.content.decode()
    second = client.get(SEARCH, {"q": "softmax", "kind": "notes", "page": "2"})
    assert len(_found(second)["notes"]) == 4
    assert 'start="21"' in second.content.decode()
    assert not set(_found(first)["notes"]) & set(_found(second)["notes"])


def _make(n: int) -> None:
    for i in range(n):
        chapter = ChapterFactory(title=f"Attention {i}")
        equation = EquationFactory(chapter=chapter, title=f"Attention weights {i}")
        EquationPartFactory(equation=equation, reason="attention scores")
        SymbolFactory(name=f"attention symbol {i}")
        NoteFactory(title=f"Attention note {i}")


def _queries(client, params: dict) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(SEARCH, params).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("params", [{"q": "attention"}, {"q": "attention", "kind": "equations"}])
def test_search_queries_do_not_grow_with_matches(client, params):
    _make(1)
    one = _queries(client, params)
    _make(49)
    assert _counts(client.get(SEARCH, params))[params.get("kind", "notes")] == 50
    assert _queries(client, params) == one
    assert one == (1 if "kind" in params else 4)  # one query per kind shown, for anyone


def test_search_too_long_is_a_400_that_says_why(client):
    response = client.get(SEARCH, {"q": "a" * (MAX_QUERY_LENGTH + 1)})
    assert response.status_code == 400
    assert (
        f"Search for at most {MAX_QUERY_LENGTH} characters; this was {MAX_QUERY_LENGTH + 1}."
        in response.content.decode()
    )
    assert 'aria-invalid="true"' in response.content.decode()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "x", "kind": "users"}, "Choose chapters, equations, symbols or notes."),
        ({"q": "x", "page": "0"}, "The page is a number from 1 to 1000."),
        ({"q": "x", "page": "two"}, "The page is a number from 1 to 1000."),
    ],
)
def test_search_bad_parameters_are_400(client, params, message):
    response = client.get(SEARCH, params)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_search_without_query_shows_the_form_only(client, content):
    response = client.get(SEARCH)
    assert response.status_code == 200
    assert response.context["groups"] == []
    assert '<label for="search-q">' in response.content.decode()


def test_search_script_in_query_is_escaped(client, content):
    response = client.get(SEARCH, {"q": '<script>alert(1)</script> "epsilon'})
    body = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert(1)" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_header_has_a_search_form_that_works_without_javascript(client):
    body = client.get(reverse("home")).content.decode()
    form = re.search(
        r'<form class="site-search" method="get" action="/search/".*?</form>', body, re.S
    )
    assert form, body
    assert '<label for="site-search-q" class="visually-hidden">Search the site</label>' in form[0]
    assert 'name="q"' in form[0]
    assert 'type="submit"' in form[0]


def test_marked_escapes_everything_but_its_own_marks():
    from platform.search import _marked

    text = "\ue000<b>x</b>\ue001 <script>y</script> \ue000open"
    expected = "<mark>&lt;b&gt;x&lt;/b&gt;</mark> &lt;script&gt;y&lt;/script&gt; open"
    assert str(_marked(text)) == expected


def test_clean_query_drops_control_characters():
    assert clean_query("  soft\x00max \t\n temp ") == "soft max temp"


@hyp_settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.text(max_size=260),
        st.text(alphabet="\"'\\\x00<>&-|!():*@ ", max_size=60),
        st.just("a" * 5000),
    )
)
def test_search_hostile_input_never_fails(client, content, text):
    response = client.get(SEARCH, {"q": text})
    visible = " ".join(re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", " ", text).split())
    body = response.content.decode()
    if len(visible) > MAX_QUERY_LENGTH:
        assert response.status_code == 400
        assert f"Search for at most {MAX_QUERY_LENGTH} characters" in body
    else:
        assert response.status_code == 200
    assert body.count("<script") == client.get(SEARCH).content.decode().count("<script")
    assert str(escape(visible[:MAX_QUERY_LENGTH])) in body  # echoed only escaped


def test_search_function_with_empty_query_is_empty_groups():
    assert [(g.kind, g.count, g.hits) for g in search("")] == [
        ("chapters", 0, []),
        ("equations", 0, []),
        ("symbols", 0, []),
        ("notes", 0, []),
    ]


@on_postgres
def test_search_ranks_title_before_text_on_postgres(client):
    ChapterFactory(title="Caching", summary="x", idea="Rotary angles are cached.")
    ChapterFactory(title="Rotary embeddings", summary="x", idea="Angles.")
    assert _found(client.get(SEARCH, {"q": "rotary"}))["chapters"] == [
        "Rotary embeddings",
        "Caching",
    ]


@on_postgres
def test_search_stems_and_reads_websearch_syntax_on_postgres(client):
    ChapterFactory(title="Normalising layers", idea="plain")
    ChapterFactory(title="Normalising batches", idea="plain")
    assert _counts(client.get(SEARCH, {"q": "normalise"}))["chapters"] == 2
    assert _found(client.get(SEARCH, {"q": "normalise -batches"}))["chapters"] == [
        "Normalising layers"
    ]


@on_sqlite
def test_search_fallback_ignores_case_and_websearch_signs_on_sqlite(client, content):
    assert _counts(client.get(SEARCH, {"q": '"EPSILON" -'}))["chapters"] == 1

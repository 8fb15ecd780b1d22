"""Notebook pages: listing, filters, permalinks, marks, sanitising, 404s, query counts."""

import datetime as dt
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from notebook.models import Note, SnippetRun
from tests.notebook.factories import (
    CorrectionFactory,
    NoteFactory,
    SnippetCheckFactory,
    SnippetRunFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db

INDEX = reverse("notebook:index")


def test_index_lists_published_notes_newest_first(client):
    older = NoteFactory(title="Older note", date=dt.date(2026, 1, 1))
    newer = NoteFactory(title="Newer note", date=dt.date(2026, 2, 1))
    NoteFactory(title="Draft note", published=False)
    response = client.get(INDEX)
    assert response.status_code == 200
    assert [n.pk for n in response.context["notes"]] == [newer.pk, older.pk]
    assert "Draft note" not in response.content.decode()


def test_index_filters_by_kind_and_topic(client):
    rope = TopicFactory(name="RoPE", slug="rope")
    code = NoteFactory(kind=Note.Kind.CODE, topics=[rope])
    derivation = NoteFactory(kind=Note.Kind.DERIVATION, topics=[rope])
    NoteFactory(kind=Note.Kind.DERIVATION)
    assert list(client.get(INDEX, {"topic": "rope"}).context["notes"]) == [derivation, code]
    by_both = client.get(INDEX, {"topic": "rope", "kind": "derivation"}).context["notes"]
    assert list(by_both) == [derivation]


def test_index_htmx_returns_only_the_list(client):
    NoteFactory(title="Listed")
    response = client.get(INDEX, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="note-list"')
    assert "<html" not in html


@pytest.mark.parametrize(
    "params",
    [
        {"topic": "no-such-topic"},
        {"topic": "a\x00b"},
        {"kind": "poem"},
        {"kind": "\x00"},
        {"page": "99"},
        {"page": "x"},
        {"page": "0"},
        {"page": "\x00"},
    ],
)
def test_index_bad_parameters_are_404(client, params):
    NoteFactory()
    assert client.get(INDEX, params).status_code == 404


def test_index_paginates(client, settings):
    settings.NOTEBOOK_PAGE_SIZE = 2
    NoteFactory.create_batch(3)
    first, second = client.get(INDEX), client.get(INDEX, {"page": 2})
    assert len(first.context["notes"]) == 2
    assert len(second.context["notes"]) == 1
    assert 'rel="next"' in first.content.decode()


def test_topic_page_and_unknown_topic(client):
    topic = TopicFactory(name="Normalisation", slug="norms", description="Norm layers.")
    note = NoteFactory(topics=[topic])
    NoteFactory()
    response = client.get(reverse("notebook:topic", args=["norms"]))
    assert list(response.context["notes"]) == [note]
    html = response.content.decode()
    assert 'type="application/rss+xml"' in html
    assert reverse("notebook:topic_feed_atom", args=["norms"]) in html
    assert client.get(reverse("notebook:topic", args=["nothing"])).status_code == 404


def test_note_page_shows_everything(client):
    topic = TopicFactory(name="Attention", slug="attention")
    note = NoteFactory(
        title="Scaled attention",
        kind=Note.Kind.DERIVATION,
        date=dt.date(2026, 5, 2),
        topics=[topic],
        summary="The square root keeps softmax out of saturation.",
        body=(
            "Scores: $QK^\\top / \\sqrt{d_k}$\n\n```python\nprint('hi')\n```\n\n"
            "| a | b |\n|---|--:|\n| 1 | 2 |\n"
        ),
        written_up_in="https://example.org/post",
        written_up_in_title="The long post",
        part_of="A project",
        part_of_url="https://example.org/project",
    )
    html = client.get(note.get_absolute_url()).content.decode()
    assert '<time datetime="2026-05-02">May 2, 2026</time>' in html
    assert "Derivation" in html
    assert '<a class="nb-topic" href="/notebook/topics/attention/">Attention</a>' in html
    assert "The square root keeps softmax out of saturation." in html
    assert "<math" in html and "<msqrt>" in html
    assert '<span class="nf">print</span>' in html or '<span class="nb">print</span>' in html
    assert '<td class="align-right">2</td>' in html
    assert 'Written up in <a href="https://example.org/post">The long post</a>' in html
    assert 'Part of <a href="https://example.org/project">A project</a>' in html
    assert 'rel="alternate" type="application/atom+xml"' in html


def test_draft_note_is_404_for_public_and_visible_to_editors(editor_client):
    draft = NoteFactory(published=False)
    assert Client().get(draft.get_absolute_url()).status_code == 404
    assert editor_client.get(draft.get_absolute_url()).status_code == 200


XSS_PAYLOADS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "[click](javascript:alert(3))",
    '<a href="javascript:alert(4)">x</a>',
    "<svg onload=alert(5)>",
    '<iframe src="https://evil.example"></iframe>',
    "[x](JaVaScRiPt:alert(6))",
    '<div style="background:url(javascript:alert(7))">x</div>',
    '<math><mi xlink:href="javascript:alert(8)">x</mi></math>',
    '$x" onmouseover="alert(9)$',
    "```html\n<script>alert(10)</script>\n```",
    "<details open ontoggle=alert(11)>",
    "[a](data:text/html;base64,PHNjcmlwdD5hbGVydCgxMik8L3NjcmlwdD4=)",
    '<form action="javascript:alert(13)"><button>go</button></form>',
]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {name: value or "" for name, value in attrs}))


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_note_body_is_sanitised(client, payload):
    note = NoteFactory(body=f"Before.\n\n{payload}\n\nAfter.")
    html = client.get(note.get_absolute_url()).content.decode()
    body = html.split('<div class="nb-body prose">')[1].split("</div><!-- /nb-body -->")[0]
    parser = _Tags()
    parser.feed(body)
    forbidden = {"script", "iframe", "form", "object", "embed", "style", "svg", "img", "details"}
    assert [tag for tag, _ in parser.tags if tag in forbidden] == []
    for tag, attrs in parser.tags:
        assert [name for name in attrs if name.startswith("on") or name == "style"] == [], tag
        for name in ("href", "src", "action", "xlink:href"):
            value = attrs.get(name, "").strip().lower()
            assert not value.startswith(("javascript:", "data:", "vbscript:")), (tag, value)
    assert "After." in body


def test_verified_appears_and_disappears_with_runs(client):
    note = NoteFactory()
    check = SnippetCheckFactory(note=note)
    url = note.get_absolute_url()
    assert "nb-verified" not in client.get(url).content.decode()  # never run

    passed = SnippetRunFactory(snippet_check=check, status=SnippetRun.Status.PASSED)
    html = client.get(url).content.decode()
    assert 'class="badge badge-ok nb-verified"' in html
    assert reverse("notebook:note_checks", args=[note.slug]) in html
    assert f"{passed.started_at:%b} {passed.started_at.day}, {passed.started_at:%Y}" in html

    SnippetRunFactory(snippet_check=check, status=SnippetRun.Status.FAILED)
    assert "nb-verified" not in client.get(url).content.decode()

    SnippetRunFactory(snippet_check=check, status=SnippetRun.Status.PASSED)
    assert "nb-verified" in client.get(url).content.decode()

    second = SnippetCheckFactory(note=note)  # a new check without a run
    assert "nb-verified" not in client.get(url).content.decode()
    SnippetRunFactory(snippet_check=second, status=SnippetRun.Status.NOT_RUN)
    assert "nb-verified" not in client.get(url).content.decode()


def test_verified_needs_a_run_of_the_current_code(client):
    note = NoteFactory()
    check = SnippetCheckFactory(note=note)
    SnippetRunFactory(snippet_check=check)
    check.code = "print(40 + 2)"
    check.save()  # the signal stores the new hash; the passing run is now stale
    note = Note.objects.with_marks().get(pk=note.pk)
    assert note.is_verified is False
    assert "nb-verified" not in client.get(note.get_absolute_url()).content.decode()


def test_checks_page_shows_output_and_diff(client):
    check = SnippetCheckFactory(name="shape check", expected_output="a\nc")
    SnippetRunFactory(
        snippet_check=check, status=SnippetRun.Status.FAILED, output="a\nb\n", diff="-c\n+b"
    )
    html = client.get(reverse("notebook:note_checks", args=[check.note.slug])).content.decode()
    assert "shape check" in html
    assert 'nb-run-failed">Failed</span>' in html
    assert "<h3>Difference</h3>" in html


def test_corrected_shows_the_dated_list(client):
    note = NoteFactory()
    CorrectionFactory(note=note, date=dt.date(2026, 5, 9), what_was_wrong="Said O(1).")
    CorrectionFactory(note=note, date=dt.date(2026, 4, 1), what_was_wrong="Wrong shape.")
    html = client.get(note.get_absolute_url()).content.decode()
    assert 'class="badge badge-warn nb-corrected"' in html
    first = html.index('<time datetime="2026-04-01">Apr 1, 2026</time>')
    second = html.index('<time datetime="2026-05-09">May 9, 2026</time>')
    assert first < second
    assert "<strong>What was wrong:</strong> Wrong shape." in html
    assert "<strong>What was wrong:</strong> Said O(1)." in html


def test_uncorrected_note_has_no_mark(client):
    note = NoteFactory()
    assert "nb-corrected" not in client.get(note.get_absolute_url()).content.decode()


def test_edit_leaves_a_history_entry():
    note = NoteFactory(body="first version")
    note.body = "second version"
    note.save()
    history = list(note.history.order_by("history_date"))
    assert [h.body for h in history] == ["first version", "second version"]
    delta = history[1].diff_against(history[0])
    assert delta.changed_fields == ["body"]


def test_published_at_is_set_once():
    note = NoteFactory(published=False)
    assert note.published_at is None
    note.published = True
    note.save()
    first = note.published_at
    assert first is not None
    note.published = False
    note.save()
    note.published = True
    note.save()
    assert note.published_at == first


def _listing_with_marks(count: int):
    topic = TopicFactory(name="Shared", slug="shared")
    for _ in range(count):
        note = NoteFactory(topics=[topic, TopicFactory()])
        SnippetRunFactory(snippet_check=SnippetCheckFactory(note=note))
        CorrectionFactory(note=note)
    return topic


@pytest.mark.parametrize("url", [INDEX, reverse("notebook:topic", args=["shared"])])
def test_listing_query_count_is_constant(client, django_assert_num_queries, settings, url):
    settings.NOTEBOOK_PAGE_SIZE = 50
    _listing_with_marks(1)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as one:
        assert client.get(url).status_code == 200
    _listing_with_marks(49)
    with django_assert_num_queries(len(one.captured_queries)):
        response = client.get(url)
    assert len(response.context["notes"]) == 50
    assert response.content.decode().count("nb-verified") == 50


def test_latest_notes_tag_constant_queries(client, django_assert_num_queries):
    from django.template import Context, Template

    template = Template("{% load notebook_tags %}{% latest_notes 5 %}")
    _listing_with_marks(1)
    with django_assert_num_queries(4):
        html = template.render(Context({}))
    _listing_with_marks(20)
    with django_assert_num_queries(4):
        html = template.render(Context({}))
    assert html.count("<li>") == 5

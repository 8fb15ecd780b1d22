"""Math text is text: what a formula says can never become markup on the page.

latex2mathml copies the argument of ``\\text`` and friends into its output unescaped, and
``\\class``/``\\style``/``\\href`` into attributes. Each payload below goes through the real
endpoints that render a learner's formula (the notation explorer and the walk-through) and
through a note's markdown, and the page must hold its text as text: no element, id or class
from the payload.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import quote

import pytest

from platform.rendering import ALLOWED_ATTRIBUTES, MATHML_TAGS, render_markdown, render_math
from tests.notebook.factories import NoteFactory

BREAKOUT = (
    '</mtext></mrow></math><a/href="https://evil.example/login"/class="pwned"/'
    'id="fromScratchWidgets">Session expired</a><h2>Fake</h2>'
)
TEXT_COMMANDS = [
    "text", "mathrm", "operatorname", "mbox", "textrm", "textbf", "mathit", "textit",
    "texttt", "textsf", "textnormal", "textup", "textmd", "emph", "hbox", "fbox", "mathbf",
    "mathsf", "mathtt", "mathbb", "mathcal", "mathfrak", "boldsymbol", "tag",
]  # fmt: skip
PAYLOADS = [
    *(rf"x + \{command}{{{BREAKOUT}}}" for command in TEXT_COMMANDS),
    r"\text{<script>alert(1)</script>}",
    r"\text{<img src=x onerror=alert(2)>}",
    r"\mbox{<svg onload=alert(3)>}",
    r"\text{<h2 id=fromScratchWidgets>Fake</h2>}",
    r"\text{&lt;h2&gt;Fake&lt;/h2&gt;}",
    r"\text{&#60;h2&#62;Fake&#60;/h2&#62;}",
    r"\verb|<h2>Fake</h2>|",
    r"\class{pwned}{x}",
    r"\class{pwned button}{\text{Session expired}}",
    r"\cssId{fromScratchWidgets}{x}",
    r"\style{position:fixed;inset:0}{x}",
    r"\href{javascript:alert(4)}{x}",
    r"\href{https://evil.example/login}{\text{Fake}}",
    r'\class{a" id="fromScratchWidgets}{x}',
    r"\color{red}{x} \colorbox{red}{y}",
    r"\text{a}\mathrm{b}\operatorname{c}\unknownthing{</math><h2>Fake</h2>}",
]
HTMX = {"HTTP_HX_REQUEST": "true"}


class _Page(HTMLParser):
    """Every element with its attributes, and the text directly inside each h2."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.math_elements: list[tuple[str, dict[str, str]]] = []
        self.h2_text: list[str] = []
        self._stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = {name: value or "" for name, value in attrs}
        self.elements.append((tag, attributes))
        if "math" in self._stack or tag == "math":
            self.math_elements.append((tag, attributes))
        self._stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass

    def handle_data(self, data):
        if self._stack and self._stack[-1] == "h2":
            self.h2_text.append(data.strip())


def assert_no_markup_from_formula(html: str) -> None:
    page = _Page()
    page.feed(html)
    assert "<script>alert" not in html
    assert "Fake" not in page.h2_text
    for tag, attrs in page.elements:
        assert tag != "script" or attrs.get("src", "").startswith("/static/"), attrs
        # A formula's alttext is its source as an escaped attribute value: text, never markup.
        scripted = {n: v for n, v in attrs.items() if not (tag == "math" and n == "alttext")}
        assert not any("alert(" in value for value in scripted.values()), (tag, attrs)
        assert attrs.get("id") != "fromScratchWidgets", tag
        assert "pwned" not in attrs.get("class", ""), tag
        assert not attrs.get("href", "").startswith(("https://evil", "javascript:")), tag
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    for tag, attrs in page.math_elements:
        assert tag in MATHML_TAGS, tag
        assert set(attrs) & {"id", "class", "style", "href"} == set(), (tag, attrs)


@pytest.mark.django_db
@pytest.mark.parametrize("latex", PAYLOADS)
@pytest.mark.parametrize("htmx", [False, True])
def test_explorer_renders_formula_text_as_text(client, latex, htmx):
    response = client.get(f"/widgets/explorer/?latex={quote(latex)}", **(HTMX if htmx else {}))
    assert response.status_code == 200
    assert_no_markup_from_formula(response.content.decode())


@pytest.mark.django_db
@pytest.mark.parametrize("latex", PAYLOADS)
def test_walkthrough_renders_formula_text_as_text(client, latex):
    response = client.get(f"/widgets/walkthrough/?latex={quote(latex)}")
    assert response.status_code == 200
    assert_no_markup_from_formula(response.content.decode())


@pytest.mark.django_db
@pytest.mark.parametrize("latex", PAYLOADS)
def test_note_markdown_renders_formula_text_as_text(client, latex):
    note = NoteFactory(body=f"Inline ${latex}$ and display\n\n$${latex}$$\n\nAfter.")
    html = client.get(note.get_absolute_url()).content.decode()
    assert "After." in html
    assert_no_markup_from_formula(html)


def test_text_argument_is_shown_as_its_characters():
    html = str(render_math(r"\text{<b>bold?</b> & more}"))
    assert "<b>" not in html
    assert "&lt;b&gt;bold?&lt;/b&gt; &amp; more" in html.replace("\u00a0", " ").replace(
        "&nbsp;", " "
    )
    markdown = str(render_markdown(r"See $\text{Fake <i>x</i>}$."))
    assert "<i>" not in markdown
    assert "&lt;i&gt;x&lt;/i&gt;" in markdown


def test_mathml_allow_list_has_no_id_or_class():
    for tag in MATHML_TAGS:
        assert {"id", "class", "style", "href"} & ALLOWED_ATTRIBUTES[tag] == set(), tag

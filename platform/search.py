"""Site-wide search: published chapters, equations, glossary symbols and notes, by kind.

On PostgreSQL each kind is one full-text query: a weighted ``SearchVector`` (A for titles and
names, B for summaries and the readable text of a formula, C for the rest) matched against a
``websearch`` ``SearchQuery``, ordered by ``SearchRank``, counted with a window function and
given a ``ts_headline`` snippet. Elsewhere (SQLite) every word must occur in one of the same
fields (``icontains``) and the snippet is cut in Python. Either way a search runs one query per
kind, however many rows match, and snippets are escaped before the matches are marked.
Notes reuse the notebook's own search (:meth:`notebook.models.NoteQuerySet.search`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import (
    Aggregate,
    Count,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
    Window,
)
from django.db.models.functions import Cast, Coalesce, Concat
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from courses.models import Chapter, Equation, EquationPart, Symbol
from notebook.models import Note
from platform.rendering import latex_to_text

MAX_QUERY_LENGTH = 200
MAX_WORDS = 8  # the SQLite fallback matches at most this many words
PER_GROUP = 5  # hits per kind when all kinds are shown
PER_PAGE = 20  # hits per page when one kind is shown
SNIPPET_CHARS = 160

# ts_headline marks matches with these (private-use characters no text of ours contains); the
# snippet is escaped first and the markers then become <mark>, so no stored HTML gets through.
_START, _STOP = "\ue000", "\ue001"
_MARKED = re.compile(f"{_START}(.*?){_STOP}", re.S)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MARKDOWN_NOISE = re.compile(r"[$`*]+|^#+ ", re.M)


class QueryError(ValueError):
    """A search text the site will not run; the message says why, for the learner."""


def clean_query(raw: str) -> str:
    """``raw`` with control characters (NUL included) dropped and whitespace collapsed.

    Raises QueryError beyond MAX_QUERY_LENGTH characters.
    """
    text = " ".join(_CONTROL.sub(" ", raw).split())
    if len(text) > MAX_QUERY_LENGTH:
        raise QueryError(
            f"Search for at most {MAX_QUERY_LENGTH} characters; this was {len(text)}. "
            "A few words work best."
        )
    return text


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    context: str
    snippet: SafeString


@dataclass
class Group:
    kind: str
    label: str
    count: int = 0
    hits: list[Hit] = field(default_factory=list)


@dataclass(frozen=True)
class Kind:
    """How one kind of content is searched and shown.

    ``fields`` are (field, weight) pairs; ``snippet_fields`` make the text a snippet is cut
    from; ``hit`` turns a row into a Hit without further queries.
    """

    key: str
    label: str
    base: Callable[[], QuerySet]
    fields: Sequence[tuple[str, str]]
    snippet_fields: Sequence[str]
    hit: Callable[[Any, SafeString], Hit]
    order: Sequence[str] = ()


class _GroupConcat(Aggregate):
    """SQLite's GROUP_CONCAT: the fallback's StringAgg."""

    function = "GROUP_CONCAT"
    output_field = TextField()


def _reasons_subquery() -> Coalesce:
    """An equation's part reasons, joined with spaces."""
    if settings.ON_POSTGRES:
        from django.contrib.postgres.aggregates import StringAgg

        joined: Aggregate = StringAgg("reason", delimiter=" ")
    else:
        joined = _GroupConcat("reason", Value(" "))
    parts = (
        EquationPart.objects.filter(equation=OuterRef("pk"))
        .order_by()
        .values("equation")
        .annotate(text=joined)
        .values("text")[:1]
    )
    return Coalesce(Subquery(parts, output_field=TextField()), Value("", TextField()))


def _equations() -> QuerySet:
    return (
        Equation.objects.filter(chapter__in=Chapter.objects.published())
        .select_related("chapter__course")
        .annotate(reasons=_reasons_subquery())
    )


def _symbol_url(symbol: Symbol) -> str:
    return reverse("widgets:explorer") + "?" + urlencode({"latex": symbol.latex or symbol.glyph})


KINDS: dict[str, Kind] = {
    kind.key: kind
    for kind in (
        Kind(
            key="chapters",
            label="Chapters",
            base=lambda: Chapter.objects.published().select_related("course"),
            fields=[("title", "A"), ("summary", "B"), ("idea", "C"), ("try_it_intro", "C")],
            snippet_fields=["summary", "idea"],
            hit=lambda c, snippet: Hit(c.title, c.get_absolute_url(), c.course.title, snippet),
            order=["course__order", "course__id", "order", "id"],
        ),
        Kind(
            key="equations",
            label="Equations",
            base=_equations,
            fields=[("title", "A"), ("readable_text", "B"), ("reasons", "C")],
            snippet_fields=["readable_text", "reasons"],
            hit=lambda e, snippet: Hit(e.title, e.get_absolute_url(), e.chapter.title, snippet),
            order=["chapter__order", "order", "id"],
        ),
        Kind(
            key="symbols",
            label="Glossary symbols",
            base=lambda: Symbol.objects.all(),
            fields=[("name", "A"), ("explanation", "B")],
            snippet_fields=["explanation"],
            hit=lambda s, snippet: Hit(s.name, _symbol_url(s), f"Glossary: {s.glyph}", snippet),
            order=["name", "id"],
        ),
        Kind(
            key="notes",
            label="Notes",
            base=lambda: Note.objects.published(),
            fields=[("title", "A"), ("summary", "B"), ("body", "C")],
            snippet_fields=["summary", "body"],
            hit=lambda n, snippet: Hit(
                n.title, n.get_absolute_url(), n.date.strftime("%-d %B %Y"), snippet
            ),
            order=["-date", "-id"],
        ),
    )
}


def _words(query: str) -> list[str]:
    """The words of a query for the SQLite fallback: websearch quotes and signs taken off."""
    words = [word.strip("\"'-+") for word in query.split()]
    return [word for word in words if word and word.lower() != "or"][:MAX_WORDS]


def _matching_postgres(kind: Kind, query: str) -> QuerySet:
    from django.contrib.postgres.search import (
        SearchHeadline,
        SearchQuery,
        SearchRank,
        SearchVector,
    )

    search_query = SearchQuery(query, search_type="websearch", config="english")
    if kind.key == "notes":
        # The notebook's own search: the same weighted vector, ranked (annotates ``rank``).
        qs = Note.objects.published().search(query)
    else:
        vector = SearchVector(kind.fields[0][0], weight=kind.fields[0][1], config="english")
        for name, weight in kind.fields[1:]:
            vector += SearchVector(name, weight=weight, config="english")
        qs = (
            kind.base()
            .annotate(document=vector)
            .filter(document=search_query)
            .annotate(rank=SearchRank(vector, search_query))
            .order_by("-rank", *kind.order)
        )
    pieces: list[Any] = []
    for name in kind.snippet_fields:
        text = Cast(F(name), output_field=TextField())
        pieces += [Coalesce(text, Value("", TextField())), Value(" … ", TextField())]
    pieces = pieces[:-1]
    document = Concat(*pieces, output_field=TextField()) if len(pieces) > 1 else pieces[0]
    return qs.annotate(
        headline=SearchHeadline(
            document,
            search_query,
            config="english",
            start_sel=_START,
            stop_sel=_STOP,
            max_words=28,
            min_words=12,
            max_fragments=2,
            fragment_delimiter=" … ",
        )
    )


def _matching_fallback(kind: Kind, query: str) -> QuerySet:
    words = _words(query)
    if not words:
        return kind.base().none()
    if kind.key == "notes":
        return Note.objects.published().search(" ".join(words))
    condition = Q()
    for word in words:
        either = Q()
        for name, _ in kind.fields:
            if name == "reasons":
                either |= Exists(
                    EquationPart.objects.filter(equation=OuterRef("pk"), reason__icontains=word)
                )
            else:
                either |= Q(**{f"{name}__icontains": word})
        condition &= either
    return kind.base().filter(condition).order_by(*kind.order)


def _tidy(text: str) -> str:
    """Markdown and LaTeX source read as text: no dollars, backticks or stars, formulas as
    readable text (``\\sqrt{d_k}`` → ``√(d_k)``), whitespace collapsed."""
    return latex_to_text(_MARKDOWN_NOISE.sub(" ", text or ""))


def _marked(text: str) -> SafeString:
    """A snippet with match markers as HTML: escaped, the markers turned into <mark>."""
    text = str(escape(text))
    text = _MARKED.sub(r"<mark>\1</mark>", text)
    return mark_safe(text.replace(_START, "").replace(_STOP, ""))  # noqa: S308


def _cut_snippet(texts: Sequence[str], words: Sequence[str]) -> SafeString:
    """A snippet of the first text that holds a word, around that word, words marked."""
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.I)
    tidied = [_tidy(text) for text in texts]
    for text in tidied:
        found = pattern.search(text) if words else None
        if found is None:
            continue
        start = max(0, found.start() - SNIPPET_CHARS // 3)
        if start:  # begin at a word
            space = text.find(" ", start)
            start = space + 1 if 0 <= space < found.start() else found.start()
        end = start + SNIPPET_CHARS
        if end < len(text):
            space = text.rfind(" ", start, end)
            end = space if space > found.end() else end
        piece = pattern.sub(lambda m: f"{_START}{m[0]}{_STOP}", text[start:end])
        prefix = "… " if start else ""
        suffix = " …" if end < len(text) else ""
        return _marked(prefix + piece + suffix)
    first = next((text for text in tidied if text), "")
    return _marked(first[:SNIPPET_CHARS] + (" …" if len(first) > SNIPPET_CHARS else ""))


def search(
    query: str, *, kinds: Sequence[str] = tuple(KINDS), limit: int = PER_GROUP, offset: int = 0
) -> list[Group]:
    """The hits for ``query`` (already cleaned), one Group per kind in ``kinds``.

    Each group holds at most ``limit`` hits from ``offset`` on and the count of every match.
    Runs one query per kind.
    """
    groups = []
    words = _words(query)
    for key in kinds:
        kind = KINDS[key]
        group = Group(kind=key, label=kind.label)
        groups.append(group)
        if not query:
            continue
        matching = (
            _matching_postgres(kind, query)
            if settings.ON_POSTGRES
            else _matching_fallback(kind, query)
        )
        rows = list(matching.annotate(total=Window(Count("pk")))[offset : offset + limit])
        group.count = rows[0].total if rows else 0
        for row in rows:
            if kind.key == "equations":  # the formula as text, or the reason that matched
                texts = [row.readable_text.split("\n")[0], row.reasons]
                snippet = _cut_snippet(texts, words)
            elif settings.ON_POSTGRES:
                snippet = _marked(_tidy(row.headline))
            else:
                snippet = _cut_snippet([getattr(row, n, "") for n in kind.snippet_fields], words)
            group.hits.append(kind.hit(row, snippet))
    return groups

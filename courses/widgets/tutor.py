"""The tutor's model answers to the seven questions about one equation.

An editor's answer (``EquationAnswer``, written in admin or the content files) wins. For a
question without one, the answer is assembled from what the site already knows about the
equation: its labelled parts (role and reason), its shape note, and the glossary entries the
explorer recognises in it. For a pasted equation there are no parts, so the glossary alone
speaks. Everything is returned as safe HTML with the maths typeset.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from courses.models import SEVEN_QUESTIONS, Equation, EquationPart, Symbol
from courses.widgets.explorer import Decoded, Entry
from platform.rendering import render_markdown, render_math

Role = EquationPart.Role
Kind = Symbol.Kind


@dataclass(frozen=True)
class ModelAnswer:
    key: str
    html: SafeString
    by_editor: bool


def _first_sentence(markdown: str) -> str:
    """Markdown up to its first full stop outside $maths$ (a glossary entry's gist)."""
    text = " ".join((markdown or "").split())
    dollars = 0
    for i, ch in enumerate(text):
        dollars += ch == "$"
        if ch == "." and dollars % 2 == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            return text[: i + 1]
    return text


def _items(rows: Iterable[tuple[SafeString, str]]) -> SafeString:
    """A list of (typeset formula, markdown text) rows."""
    rows = list(rows)
    if not rows:
        return mark_safe("")
    return format_html(
        '<ul class="model-list">{}</ul>',
        format_html_join("", "<li>{} — {}</li>", ((m, _inline(t)) for m, t in rows)),
    )


def _inline(markdown: str) -> SafeString:
    html = str(render_markdown(markdown))
    if html.startswith("<p>") and html.rstrip().endswith("</p>") and html.count("<p>") == 1:
        html = html.strip()[3:-4]
    return mark_safe(html)  # noqa: S308 - render_markdown sanitised it


def _para(text: str) -> SafeString:
    return format_html("<p>{}</p>", text)


def _symbols(decoded: Decoded | None, *kinds: str) -> list[Entry]:
    if decoded is None:
        return []
    return [e for e in decoded.symbols if getattr(e.symbol, "kind", "") in kinds]


def _glossary_rows(entries: Sequence[Entry]) -> list[tuple[SafeString, str]]:
    rows = []
    for e in entries:
        latex = getattr(e.symbol, "latex", "") or ""
        shown = render_math(latex) if latex else getattr(e.symbol, "glyph", e.key)
        explanation = e.explanation or getattr(e.symbol, "explanation", "")
        rows.append(
            (format_html("{} <strong>{}</strong>", shown, e.name), _first_sentence(explanation))
        )
    return rows


def _part_rows(parts: Sequence[EquationPart], *roles: str) -> list[tuple[SafeString, str]]:
    return [(render_math(p.latex), p.reason) for p in parts if p.role in roles]


def assembled(
    key: str, equation: Equation | None, parts: Sequence[EquationPart], decoded: Decoded | None
) -> SafeString:
    """The model answer to question ``key`` built from parts, shape note and glossary."""
    if key == "output":
        rows = _part_rows(parts, Role.OUTPUT)
        if rows:
            return _items(rows)
        return _para("The left-hand side of the equals sign: what the formula computes.")
    if key == "inputs":
        rows = _part_rows(parts, Role.INPUT) or _glossary_rows(_symbols(decoded, Kind.QUANTITY))
        return _items(rows) or _para("Nothing arrives from outside: every symbol is fixed here.")
    if key == "learned":
        learned = _part_rows(parts, Role.LEARNED) or _glossary_rows(_symbols(decoded, Kind.LEARNED))
        constants = _part_rows(parts, Role.CONSTANT) or _glossary_rows(
            _symbols(decoded, Kind.CONSTANT)
        )
        out = _items(learned) if learned else _para("Nothing in this formula is set by training.")
        if constants:
            out = format_html("{}<p>Picked by hand instead:</p>{}", out, _items(constants))
        return out
    if key == "shapes":
        if equation is not None and equation.shape_note:
            return render_markdown(equation.shape_note)
        return _para(
            "This equation has no shape note yet: write each input's shape, then follow it "
            "through every operation to the output."
        )
    if key == "operations":
        rows = _part_rows(parts, Role.OPERATION) + _glossary_rows(_symbols(decoded, Kind.OPERATION))
        unique = list({str(formula): (formula, text) for formula, text in rows}.values())
        return _items(unique) or _para("No operation the glossary knows appears in it.")
    if key == "extremes":
        prompts = [
            (format_html("{}", getattr(e.symbol, "glyph", e.key)), e.symbol.extremes)
            for e in (decoded.symbols if decoded else [])
            if getattr(e.symbol, "extremes", "")
        ]
        if prompts:
            return _items(prompts)
        rows = _part_rows(parts, Role.CONSTANT)
        if rows:
            return format_html(
                "<p>Push each constant to 0 and to ∞ and follow it through:</p>{}", _items(rows)
            )
        return _para("Push each constant to 0 and to a very large value and see what is left.")
    # ablations: what each part is for is what goes missing without it.
    rows = _part_rows(parts, Role.OPERATION, Role.CONSTANT)
    if rows:
        return format_html("<p>Each part's job is what breaks without it:</p>{}", _items(rows))
    rows = _glossary_rows(_symbols(decoded, Kind.OPERATION, Kind.CONSTANT))
    return _items(rows) or _para("Remove one symbol at a time and check what no longer works.")


def model_answers(equation: Equation | None, decoded: Decoded | None) -> dict[str, ModelAnswer]:
    """Every question's model answer: the editor's where written, else assembled.

    Reads the equation's parts and answers (two queries, or none when prefetched).
    """
    parts = list(equation.parts.all()) if equation is not None else []
    written = {a.question: a.text for a in equation.answers.all()} if equation else {}
    out = {}
    for key, _question in SEVEN_QUESTIONS:
        if written.get(key):
            out[key] = ModelAnswer(key, render_markdown(written[key]), by_editor=True)
        else:
            out[key] = ModelAnswer(key, assembled(key, equation, parts, decoded), by_editor=False)
    return out

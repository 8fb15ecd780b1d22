"""Every formula the site shows, gathered from the database: the typesetting gallery lists them
and the corpus test typesets each one.

A formula is a LaTeX field (an equation, a labelled part, a glossary symbol) or a ``$…$`` in a
Markdown field; which fields are which is declared on the models (``LATEX_FIELDS`` and
``MARKDOWN_FIELDS``), the same lists their ``clean()`` validates.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db import models

from notebook.models import Correction, Note
from platform.rendering import formulas_in_markdown

from .models import Chapter, Choice, Equation, EquationPart, Question, Symbol

MODELS: tuple[type[models.Model], ...] = (
    Symbol, Chapter, Equation, EquationPart, Question, Choice, Note, Correction,
)  # fmt: skip


# The flaws learners reported, typed as editors type them: the gallery shows them first and
# tests/platform/test_typesetting_corpus.py pins the MathML each one produces.
REGRESSION_CASES: tuple[str, ...] = (
    r"\operatorname{Attention}(Q, K, V)",
    r"\mathrm{LN}(x)",
    r"\operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V",
    r"\log q_i",
    r"\exp(x) + \max(a, b)",
    r"\max_i x_i",
    r"\log \mathbb{E}[\cdot] = 1",
    r"\mathbb{E}\big[(y - \hat f(x))^2\big] = \big(a - b\big)^2",
    r"\mathrm{Var}\big(\hat f(x)\big)",
    r"\Big(x\Big)^2",
    r"\bigl( x \bigr)",
    r"\sqrt{}",
    r"^\top",
    r"A = Q \Lambda Q^{-1}",
    r"\hat{m}_t + \tilde{x} + \widehat{xy}",
    r"\int f(x)\,\mathrm{d}x + \mathrm{e}^x",
    r"QK^\top",
)


@dataclass(frozen=True)
class Formula:
    latex: str
    display: bool
    where: str  # e.g. "Equation 12 (latex)", for a reviewer to find it


@dataclass
class GalleryEntry:
    latex: str
    display: bool
    places: list[str]


def gallery() -> list[GalleryEntry]:
    """The regression cases, then each distinct formula of the content with where it appears."""
    entries = [GalleryEntry(latex, True, ["regression case"]) for latex in REGRESSION_CASES]
    by_source: dict[tuple[str, bool], GalleryEntry] = {}
    for formula in all_formulas():
        key = (formula.latex.strip(), formula.display)
        if key not in by_source:
            by_source[key] = GalleryEntry(key[0], formula.display, [])
            entries.append(by_source[key])
        by_source[key].places.append(formula.where)
    return entries


def all_formulas() -> Iterator[Formula]:
    """Each formula in the content once per place it appears, models in a fixed order.
    One query per model."""
    for model in MODELS:
        latex_fields: tuple[str, ...] = getattr(model, "LATEX_FIELDS", ())
        markdown_fields: tuple[str, ...] = getattr(model, "MARKDOWN_FIELDS", ())
        fields = ["pk", *latex_fields, *markdown_fields]
        for row in model._default_manager.order_by("pk").values(*fields):
            label = f"{model._meta.verbose_name} {row['pk']}"
            for name in latex_fields:
                if (row[name] or "").strip():
                    display = model is Equation
                    yield Formula(row[name], display, f"{label} ({name})")
            for name in markdown_fields:
                for latex in formulas_in_markdown(row[name] or ""):
                    yield Formula(latex, False, f"{label} ({name}, in text)")

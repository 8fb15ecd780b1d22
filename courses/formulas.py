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


@dataclass(frozen=True)
class Formula:
    latex: str
    display: bool
    where: str  # e.g. "Equation 12 (latex)", for a reviewer to find it


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

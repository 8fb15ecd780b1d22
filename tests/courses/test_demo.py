"""The demo content: idempotent, the seed's figures, and listings that print what they claim."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.management import call_command

from courses import contentfiles
from courses.models import (
    Chapter,
    ChapterSymbol,
    Choice,
    CodeListing,
    Equation,
    EquationPart,
    Question,
    Symbol,
)

pytestmark = pytest.mark.django_db

CAPSTONE_OUTPUT = (
    "(4, 8) (4, 4) [1.0, 1.0, 1.0, 1.0]\n[-1.342, -0.447, 0.447, 1.342] 0.0 1.0\n-0.0001\n"
)
GLOSSARY = contentfiles.parse_glossary(contentfiles.DEFAULT_DIR / contentfiles.GLOSSARY_FILE)


def counts() -> dict[str, int]:
    models = [Chapter, ChapterSymbol, Choice, CodeListing, Equation, EquationPart, Question, Symbol]
    return {model.__name__: model.objects.count() for model in models}


def test_demo_load_is_idempotent(demo_course):
    first = counts()
    ids = sorted(Choice.objects.values_list("id", flat=True))
    again = contentfiles.load(paths=[contentfiles.DEFAULT_DIR]).summaries
    assert (
        again
        == demo_course
        == [
            f"glossary: {len(GLOSSARY)} symbols",
            "course reading-ml-papers: 11 chapters, 33 equations, 44 questions, 11 listings",
        ]
    )
    assert counts() == first
    assert sorted(Choice.objects.values_list("id", flat=True)) == ids


def test_load_demo_command_runs_twice(capsys):
    call_command("load_demo")
    call_command("load_demo")
    out = capsys.readouterr().out
    assert out.count("course reading-ml-papers: 11 chapters") == 2
    assert "demo newsletter:" in out
    assert Chapter.objects.published().count() == 11
    assert set(CodeListing.objects.values_list("check_status", flat=True)) == {"passed"}
    capstone = Chapter.objects.get(slug="capstone-three-equations")
    assert sorted(capstone.related_notes.values_list("slug", flat=True)) == [
        "pre-norm-vs-post-norm",
        "rmsnorm-vs-layernorm",
        "scaled-dot-product-attention",
    ]


def test_demo_capstone_has_the_seed_content(demo_course):
    capstone = Chapter.objects.get(slug="capstone-three-equations")
    assert capstone.course.title == "Reading ML papers"
    assert [e.title for e in capstone.equations.all()] == [
        "Scaled dot-product attention",
        "Adam's running averages",
        "Adam's step",
        "Layer normalization",
    ]
    assert all(e.parts.exists() and e.shape_note for e in capstone.equations.all())
    assert capstone.listings.get().expected_output == CAPSTONE_OUTPUT
    assert capstone.questions.count() == 4
    for question in capstone.questions.all():
        assert question.choices.filter(is_correct=True).count() == 1
    assert [s.symbol.glyph for s in capstone.chapter_symbols.all()] == [
        "softmax",
        "ᵀ",
        "√",
        "ε",
        "⊙",
        "η",
    ]
    assert set(capstone.prerequisites.values_list("slug", flat=True)) == {
        "attention-and-masks",
        "rmsnorm-vs-layernorm",
        "adam-and-adamw",
    }
    roles = set(EquationPart.objects.values_list("role", flat=True))
    assert roles == {"output", "input", "learned", "constant", "operation"}


def test_demo_symbols_come_from_the_glossary(demo_course):
    assert len(GLOSSARY) == Symbol.objects.count() == 98
    for entry in GLOSSARY:
        symbol = Symbol.objects.get(slug=entry["slug"])
        assert (symbol.glyph, symbol.tokens) == (entry["glyph"], entry["tokens"])
        assert (symbol.kind, symbol.extremes) == (entry["kind"], entry["extremes"])


def test_demo_listings_print_their_expected_output(tmp_path, demo_course):
    listings = list(CodeListing.objects.all())
    assert len(listings) == 11
    for listing in listings:
        script = tmp_path / listing.filename
        script.write_text(listing.source)
        result = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == listing.expected_output, listing.filename

"""The explorer reads Unicode as well as LaTeX: combining accents (m̂, v̂, x̄), super- and
subscript characters (ᵗ, ⁻¹, ₁), and words as words, prose around a formula left alone. Every
equation of the loaded content decodes with no unknown symbol, in LaTeX and as typed in Unicode
(tests/courses/widgets/data/unicode_transcriptions.toml)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from courses import contentfiles
from courses.contentfiles import DEFAULT_DIR, GLOSSARY_FILE, parse_glossary
from courses.models import Equation
from courses.widgets.explorer import decode, load_symbols, tokenize

GLOSSARY = parse_glossary(DEFAULT_DIR / GLOSSARY_FILE)
TRANSCRIPTIONS = {
    row["latex"]: row["unicode"]
    for row in tomllib.loads(
        (Path(__file__).parent / "data" / "unicode_transcriptions.toml").read_text()
    )["equation"]
}


def found(text: str) -> list[tuple[str, str, list[str]]]:
    return [(e.kind, e.key, e.occurrences) for e in decode(text, GLOSSARY).entries]


def test_explorer_adam_update_in_unicode_names_the_hatted_moments():
    decoded = decode("θ_t = θ_{t−1} − η · m̂_t / (√v̂_t + ε)", GLOSSARY)
    assert decoded.unknown == []
    by_key = {e.key: e.occurrences for e in decoded.symbols}
    assert by_key["m-hat"] == ["m̂_t"]
    assert by_key["v-hat"] == ["v̂_t"]
    assert "positions" not in by_key and "hat" not in by_key and "m-t" not in by_key
    assert decoded.slugs == [
        "theta", "eta", "m-hat", "fraction", "square-root", "v-hat", "epsilon",
    ]  # fmt: skip


def test_explorer_latex_hat_found_as_m_hat():
    assert decode(r"\hat{m}_t", GLOSSARY).slugs == ["m-hat"]
    assert decode(r"\hat m_t + \hat{v}_{t}", GLOSSARY).slugs == ["m-hat", "v-hat"]


def test_explorer_unicode_power_and_inverse():
    decoded = decode("Aᵗ = QΛᵗQ⁻¹", GLOSSARY)
    assert decoded.unknown == []
    by_key = {e.key: e.occurrences for e in decoded.symbols}
    assert by_key["inverse"] == ["⁻¹"]
    assert by_key["time-step"] == ["ᵗ", "ᵗ"]
    assert by_key["capital-lambda"] == ["Λ"]
    assert by_key["matrix-a"] == ["A"]


def test_explorer_script_runs_read_as_one_script():
    assert [t.key for t in tokenize("Q⁻¹")] == [t.key for t in tokenize("Q^{-1}")]
    assert [t.key for t in tokenize("mₜ₋₁")] == [t.key for t in tokenize("m_{t-1}")]
    assert [t.key for t in tokenize("Aᵀ")] == ["A", "^", "T"]
    assert [t.key for t in tokenize("x₁ + x²")] == ["x", "_", "1", "+", "x", "^", "2"]


def test_explorer_combining_accents_are_their_commands():
    assert [t.key for t in tokenize("m̂")] == [r"\hat", "m"]
    assert [t.key for t in tokenize("x̄")] == [r"\bar", "x"]
    assert [t.key for t in tokenize("θ̃")] == [r"\tilde", r"\theta"]
    assert [t.key for t in tokenize("ab̂")] == ["a", r"\hat", "b"]
    assert found("x̄") == [
        ("structure", r"\bar", ["x̄"]),
        ("symbol", "x", ["x̄"]),
    ]


def test_explorer_prose_around_a_formula_is_left_alone():
    decoded = decode("where d is the dimension", GLOSSARY)
    assert decoded.slugs == ["d"]
    assert decoded.unknown == [] and decoded.structure == []
    decoded = decode("The scores QKᵀ are divided by √d_k before the softmax", GLOSSARY)
    assert decoded.slugs == ["query", "key", "transpose", "square-root", "d-k", "softmax"]
    assert "euler-e" not in decoded.slugs


def test_explorer_words_in_a_script_are_a_text_label():
    assert found("W_{down}") == [
        ("symbol", "matrix-a", ["W"]),
        ("symbol", "subscript", ["_"]),
        ("text", "text", ["down"]),
    ]
    # Letters side by side are still symbols: QK, Ax.
    assert decode("QK + Ax", GLOSSARY).slugs == ["query", "key", "matrix-a", "x"]


@pytest.mark.django_db
def test_explorer_decodes_every_content_equation_in_latex_and_unicode():
    contentfiles.load_demo()
    symbols = load_symbols()
    equations = list(Equation.objects.values_list("latex", flat=True))
    assert equations
    missing = [latex for latex in equations if latex not in TRANSCRIPTIONS]
    assert missing == []  # a new equation needs its Unicode transcription in the data file
    for latex in equations:
        in_latex = decode(latex, symbols)
        in_unicode = decode(TRANSCRIPTIONS[latex], symbols)
        assert [e.key for e in in_latex.unknown] == [], latex
        assert [e.key for e in in_unicode.unknown] == [], TRANSCRIPTIONS[latex]
        # The same symbols either way (bold type has no plain-Unicode spelling).
        assert set(in_unicode.slugs) == set(in_latex.slugs) - {"bold"}, latex

"""The notation explorer: split a pasted equation into tokens and name every one of them.

Symbols come from the glossary (``courses.Symbol`` rows, loaded once per request); layout and
structure (brackets, ``=``, spacing …) come from ``STRUCTURE`` below. Each Symbol token is
tokenised with the same rules as the equation, so ``d_k``, ``d_{k}`` and ``dₖ`` are one token
sequence, and at every position the longest glossary sequence wins (``\\beta_1`` before ``\\beta``).

No Django import here except in :func:`load_symbols`, so the matcher is testable on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

MAX_LATEX_LENGTH = 2000

# Unicode that stands for LaTeX structure: sub/superscripts become "_x" / "^x", Greek letters
# their commands (capital Σ is left alone: pasted as a glyph it is nearly always a sum).
_SUBSCRIPTS = dict(
    zip(
        "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋₌₍₎ᵦᵧᵨᵩᵪ",
        "0123456789aehijklmnoprstuvx+-=()βγρφχ",
        strict=True,
    )
)
_SUPERSCRIPTS = dict(
    zip(
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵅᵝᵞᵟᵋᶿᶥᵠᵡ",
        "0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWαβγδεθιφχ",
        strict=True,
    )
)
# Combining accents typed after a letter (m̂, v̂, x̄) stand for the LaTeX accent command.
_ACCENTS = {
    "\u0302": r"\hat", "\u0304": r"\bar", "\u0305": r"\bar", "\u0303": r"\tilde",
    "\u0307": r"\dot", "\u20d7": r"\vec",
}  # fmt: skip
_COMBINING = "\u0300-\u036f\u20d0-\u20ff"
# Two-letter English words that are never a product of two symbols in a pasted line.
_SHORT_WORDS = frozenset(
    {"is", "of", "to", "in", "by", "at", "on", "as", "an", "be", "if", "or", "so", "we", "it"}
)
_GREEK = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon",
    "ϵ": r"\epsilon", "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ι": r"\iota",
    "κ": r"\kappa", "λ": r"\lambda", "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "π": r"\pi",
    "ρ": r"\rho", "σ": r"\sigma", "τ": r"\tau", "φ": r"\phi", "χ": r"\chi", "ψ": r"\psi",
    "ω": r"\omega", "Γ": r"\Gamma", "Δ": r"\Delta", "Θ": r"\Theta", "Λ": r"\Lambda",
    "Π": r"\Pi", "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega",
}  # fmt: skip
_ALIASES = {
    "−": "-", "∗": "*", r"\varepsilon": r"\epsilon", r"\ge": r"\geq", r"\le": r"\leq",
    r"\lvert": "|", r"\rvert": "|", r"\vert": "|", r"\lbrace": r"\{", r"\rbrace": r"\}",
    r"\dfrac": r"\frac", r"\tfrac": r"\frac", r"\textrm": r"\text", r"\to": r"\rightarrow",
    "→": r"\rightarrow", "…": r"\ldots", r"\dots": r"\ldots", r"\top": r"\top",
}  # fmt: skip
# Pure layout: dropped before matching and never listed.
_IGNORED = {
    "{", "}", r"\,", r"\!", r"\;", r"\:", r"\ ", r"\quad", r"\qquad", "~", r"\left", r"\right",
    r"\big", r"\Big", r"\bigg", r"\Bigg", r"\bigl", r"\bigr", r"\Bigl", r"\Bigr", r"\middle",
    r"\displaystyle", r"\textstyle", r"\limits", r"\nolimits", "&", r"\\", r"\nonumber",
    r"\label", r"\tag", r"\enspace", r"\thinspace", r"\medspace", r"\thickspace",
}  # fmt: skip

# Structural operators the explorer explains itself (the glossary may override any of them).
STRUCTURE: dict[str, tuple[str, str]] = {
    "=": ("equals", "The left side is defined as, or computed to be, the right side."),
    "+": ("plus", "Addition, element by element for arrays of the same shape."),
    "-": ("minus", "Subtraction, or a negative sign in front of a single term."),
    "*": ("times", "Multiplication (in code; papers usually just write symbols side by side)."),
    r"\times": ("times ×", "Multiplication of numbers, or the sizes in a shape: tokens × d_k."),
    "×": ("times ×", "Multiplication of numbers, or the sizes in a shape: tokens × d_k."),
    r"\cdot": ("centred dot ·", "Multiplication, or a placeholder for an argument: f(·)."),
    "·": ("centred dot ·", "Multiplication, or a placeholder for an argument: f(·)."),
    "(": ("parentheses", "Group a sub-expression, or hold a function's arguments."),
    ")": ("parentheses", "Group a sub-expression, or hold a function's arguments."),
    "[": ("square brackets", "Grouping; after 𝔼 they hold what is averaged."),
    "]": ("square brackets", "Grouping; after 𝔼 they hold what is averaged."),
    r"\{": ("braces", "A set, or a case split."),
    r"\}": ("braces", "A set, or a case split."),
    "|": ("vertical bars", "Absolute value |x|, or 'given' inside a probability."),
    ",": ("comma", "Separates arguments or lists several equations side by side."),
    ";": ("semicolon", "Separates the inputs from the settings: softmax(x; τ)."),
    ":": ("colon", "'such that', or a mapping f: A → B."),
    ".": ("full stop", "Ends the sentence the equation belongs to."),
    "!": ("factorial", "n! = 1 · 2 · … · n."),
    "<": ("less than", "A comparison."),
    ">": ("greater than", "A comparison."),
    r"\leq": ("at most ≤", "Less than or equal to."),
    "≤": ("at most ≤", "Less than or equal to."),
    r"\geq": ("at least ≥", "Greater than or equal to."),
    "≥": ("at least ≥", "Greater than or equal to."),
    r"\neq": ("not equal ≠", "The two sides differ."),
    "≠": ("not equal ≠", "The two sides differ."),
    r"\pm": ("plus or minus ±", "Both signs, or a range around a value."),
    "±": ("plus or minus ±", "Both signs, or a range around a value."),
    r"\rightarrow": ("arrow →", "Tends to (τ → 0), or maps to (f: A → B)."),
    r"\infty": ("infinity ∞", "Without bound; 'as τ → ∞' means as τ grows without limit."),
    "∞": ("infinity ∞", "Without bound; 'as τ → ∞' means as τ grows without limit."),
    r"\ldots": ("ellipsis …", "And so on, following the evident pattern."),
    r"\cdots": ("ellipsis ⋯", "And so on, following the evident pattern."),
    r"\underbrace": ("underbrace", "Labels the group above the brace with the text below it."),
    r"\overbrace": ("overbrace", "Labels the group under the brace with the text above it."),
    r"\mathbb": ("blackboard bold", "Marks a number set (ℝ) or an operator such as 𝔼."),
    r"\mathcal": ("calligraphic letter", "A set, a distribution, a loss 𝓛 or order 𝒪."),
    r"\mathrm": ("upright text", "A name rather than a product of letters."),
    r"\operatorname": ("named operator", "Typesets a function name such as softmax."),
    r"\text": ("text", "Ordinary words inside the formula."),
    "^": ("superscript", "A power, or a label written above and to the right."),
    "_": ("subscript", "An index or label written below and to the right."),
    r"\frac": ("fraction", "Top divided by bottom."),
    r"\sqrt": ("square root", "The number that squared gives what is under the sign."),
    r"\sum": ("sum", "Add the expression for every value of the index."),
    r"\prod": ("product ∏", "Multiply the expression for every value of the index."),
    r"\int": ("integral ∫", "A continuous sum: area under a curve."),
    r"\hat": ("hat", "An estimate or corrected version of the symbol."),
    r"\bar": ("bar", "A mean, or a complement."),
    r"\tilde": ("tilde", "A modified or approximate version of the symbol."),
    r"\mathbf": ("bold", "A vector or matrix."),
    r"\boldsymbol": ("bold", "A vector or matrix."),
}
NUMBER = ("number", "A literal number.")
TEXT_LABEL = ("text label", "Words that annotate the formula (not a symbol to compute with).")

_TOKEN = re.compile(
    r"\\(?P<named>text|operatorname\*?|mathrm|textit|mathit|textbf)\s*\{(?P<word>[^{}]*)\}"
    r"|(?P<cmd>\\[A-Za-z]+)"
    r"|(?P<esc>\\[^A-Za-z])"
    rf"|(?P<accented>[A-Za-z\u0370-\u03ff])(?P<accents>[{_COMBINING}]+)"
    rf"|(?P<letters>[A-Za-z]+(?![{_COMBINING}]))"
    r"|(?P<number>\d+(?:\.\d+)?)"
    r"|(?P<space>\s+)"
    r"|(?P<char>.)",
    re.DOTALL,
)


@dataclass(frozen=True)
class Tok:
    key: str  # normalised form used for matching
    kind: str  # "cmd", "word", "letter", "number", "char", "named"
    start: int
    end: int


def _split_letters(run: str, words: frozenset[str]) -> list[tuple[str, int]]:
    """Split a run of ASCII letters into known multi-letter words and single letters."""
    if run in words:
        return [(run, 0)]
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(run):
        for j in range(len(run), i + 1, -1):
            if run[i:j] in words:
                out.append((run[i:j], i))
                i = j
                break
        else:
            out.append((run[i], i))
            i += 1
    return out


def _is_prose(run: str, words: frozenset[str]) -> bool:
    """A run of letters that reads as an English word, not as symbols written side by side:
    ``where``, ``the``, ``Dimension``, ``is`` (``QK``, ``Ax`` and glossary words are not)."""
    if run in words:
        return False
    if run.lower() in _SHORT_WORDS:
        return True
    return len(run) >= 3 and run[1:].islower() and run[1:].isalpha()


def _letter(ch: str, start: int, end: int) -> Tok:
    return Tok(_GREEK[ch], "cmd", start, end) if ch in _GREEK else Tok(ch, "letter", start, end)


def tokenize(latex: str, words: frozenset[str] = frozenset()) -> list[Tok]:
    """Tokens of a LaTeX or Unicode formula, with layout (braces, spacing) dropped.

    Unicode is read as its LaTeX: ``m̂`` as ``\\hat{m}``, ``⁻¹`` as ``^{-1}`` (a run of
    superscript characters is one script), ``ₜ₋₁`` as ``_{t-1}``. English words around or inside
    a formula are not letters: in a script they are a text label, elsewhere they are skipped.
    """
    toks: list[Tok] = []
    script: tuple[str, int] | None = None  # the script run being continued: ("^", end)
    for m in _TOKEN.finditer(latex):
        start, end = m.span()
        if script is not None and script[1] != start:
            script = None
        if m.group("accented"):
            for accent in m.group("accents"):
                if accent in _ACCENTS:
                    toks.append(Tok(_ACCENTS[accent], "cmd", start, end))
            toks.append(_letter(m.group("accented"), start, end))
        elif m.group("named"):
            word = m.group("word").strip()
            if word:
                kind = "named" if m.group("named").startswith("operatorname") else "text"
                toks.append(Tok(word, kind, start, end))
        elif m.group("cmd") or m.group("esc"):
            key = m.group("cmd") or m.group("esc")
            key = _ALIASES.get(key, key)
            if key not in _IGNORED:
                toks.append(Tok(key, "cmd", start, end))
        elif m.group("letters") and _is_prose(m.group("letters"), words):
            before = latex[:start].rstrip()
            if before.endswith(("_", "^", "{")):
                toks.append(Tok(m.group("letters"), "text", start, end))
        elif m.group("letters"):
            for piece, offset in _split_letters(m.group("letters"), words):
                kind = "word" if len(piece) > 1 else "letter"
                toks.append(Tok(piece, kind, start + offset, start + offset + len(piece)))
        elif m.group("number"):
            toks.append(Tok(m.group("number"), "number", start, end))
        elif m.group("char"):
            ch = m.group("char")
            if ch in _SUBSCRIPTS or ch in _SUPERSCRIPTS:
                mark, value = (
                    ("_", _SUBSCRIPTS[ch]) if ch in _SUBSCRIPTS else ("^", _SUPERSCRIPTS[ch])
                )
                if script is None or script[0] != mark:
                    toks.append(Tok(mark, "char", start, end))
                if value in "+-=()":
                    key = _ALIASES.get(value, value)
                    toks.append(Tok(key, "char", start, end))
                else:
                    toks.append(_letter(value, start, end))
                script = (mark, end)
            elif ch in _GREEK:
                toks.append(Tok(_GREEK[ch], "cmd", start, end))
            else:
                key = _ALIASES.get(ch, ch)
                if key not in _IGNORED:
                    toks.append(Tok(key, "char", start, end))
    # Superscript digits pasted as Unicode read as numbers: "⁻¹" → ^ - 1.
    return [
        Tok(t.key, "number", t.start, t.end) if t.kind == "letter" and t.key.isdigit() else t
        for t in toks
    ]


@dataclass
class Entry:
    """One distinct thing found in the formula, with every place it occurs."""

    kind: str  # "symbol", "structure", "number", "text", "unknown"
    key: str
    name: str
    explanation: str = ""
    symbol: Any = None  # the Symbol row (or glossary dict) for kind == "symbol"
    occurrences: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.occurrences)


@dataclass
class Decoded:
    latex: str
    entries: list[Entry]

    @property
    def symbols(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == "symbol"]

    @property
    def structure(self) -> list[Entry]:
        return [e for e in self.entries if e.kind in ("structure", "number", "text")]

    @property
    def unknown(self) -> list[Entry]:
        return [e for e in self.entries if e.kind == "unknown"]

    @property
    def slugs(self) -> list[str]:
        return [e.key for e in self.symbols]


def _attr(symbol: Any, name: str) -> Any:
    return symbol[name] if isinstance(symbol, dict) else getattr(symbol, name)


@dataclass(frozen=True)
class Matcher:
    words: frozenset[str]
    table: dict[tuple[str, ...], int]  # token-key sequence -> index into symbols
    longest: int


@lru_cache(maxsize=8)
def _compile(fingerprint: tuple[tuple[str, tuple[str, ...]], ...]) -> Matcher:
    words: set[str] = set()
    for _slug, tokens in fingerprint:
        for token in tokens:
            for m in _TOKEN.finditer(token):
                if m.group("letters") and len(m.group("letters")) > 1:
                    words.add(m.group("letters"))
                if m.group("named") and len(m.group("word").strip()) > 1:
                    words.add(m.group("word").strip())
    frozen = frozenset(words)
    table: dict[tuple[str, ...], int] = {}
    for index, (_slug, tokens) in enumerate(fingerprint):
        for token in tokens:
            seq = tuple(t.key for t in tokenize(token, frozen))
            if seq:
                table.setdefault(seq, index)  # the first symbol to claim a sequence keeps it
    return Matcher(frozen, table, max((len(s) for s in table), default=1))


def matcher_for(symbols: Sequence[Any]) -> Matcher:
    fingerprint = tuple(
        (str(_attr(s, "slug")), tuple(str(t) for t in (_attr(s, "tokens") or []))) for s in symbols
    )
    return _compile(fingerprint)


def _source(latex: str, start: int, end: int) -> str:
    """The text of a match, with its braces balanced (``m_{t-1`` becomes ``m_{t-1}``)."""
    kept: list[str] = []
    depth = 0
    for ch in latex[start:end]:
        if ch == "}" and depth == 0:
            continue  # closes a group opened before the match, e.g. the } of \hat{m}_t
        depth += ch == "{"
        depth -= ch == "}"
        kept.append(ch)
    while depth > 0 and end < len(latex) and latex[end] in "} ":
        if latex[end] == "}":
            kept.append("}")
            depth -= 1
        end += 1
    return "".join(kept).strip() + "}" * depth


def decode(latex: str, symbols: Sequence[Any]) -> Decoded:
    """Name every token of ``latex`` from ``symbols`` (Symbol rows or glossary dicts)."""
    latex = latex[:MAX_LATEX_LENGTH]
    matcher = matcher_for(symbols)
    toks = tokenize(latex, matcher.words)
    entries: dict[tuple[str, str], Entry] = {}

    def add(kind: str, key: str, name: str, explanation: str, source: str, symbol=None) -> None:
        entry = entries.get((kind, key))
        if entry is None:
            entry = entries[(kind, key)] = Entry(kind, key, name, explanation, symbol)
        entry.occurrences.append(source)

    i = 0
    while i < len(toks):
        for n in range(min(matcher.longest, len(toks) - i), 0, -1):
            index = matcher.table.get(tuple(t.key for t in toks[i : i + n]))
            if index is not None:
                symbol = symbols[index]
                source = _source(latex, toks[i].start, toks[i + n - 1].end)
                add(
                    "symbol",
                    str(_attr(symbol, "slug")),
                    str(_attr(symbol, "name")),
                    str(_attr(symbol, "explanation")),
                    source,
                    symbol,
                )
                i += n
                break
        else:
            tok = toks[i]
            source = _source(latex, tok.start, tok.end)
            if tok.kind == "number":
                add("number", "number", *NUMBER, source)
            elif tok.kind == "text":
                add("text", "text", *TEXT_LABEL, source)
            elif tok.key in STRUCTURE:
                add("structure", tok.key, *STRUCTURE[tok.key], source)
            else:
                add("unknown", tok.key, tok.key, "", source)
            i += 1
    return Decoded(latex, list(entries.values()))


def load_symbols() -> list[Any]:
    """Every Symbol row, in one query, with the fields the explorer and the walk-through read."""
    from courses.models import Symbol

    fields = ("slug", "name", "glyph", "latex", "tokens", "explanation", "kind", "extremes")
    return list(Symbol.objects.only(*fields))

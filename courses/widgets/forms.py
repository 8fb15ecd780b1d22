"""Forms of the widgets: every input bounded, every error naming its field and allowed range.

The caps keep the work per request small and bounded: tokens ≤ 64, any dimension ≤ 256,
steps ≤ 5,000, vectors ≤ 256 entries, a pasted equation ≤ 2,000 characters, typed matrices and
the whole query string of bounded size (:func:`too_large`, the one size rule of every widget
endpoint, checked before any form is bound).
"""

from __future__ import annotations

import math
import re

from django import forms

MAX_TOKENS = 64
MAX_DIM = 256
MAX_STEPS = 5000
MAX_VECTOR = 256
MAX_LATEX = 2000
MAX_MATRIX_CHARS = 4000
MAX_QUERY_STRING = 16384
MAX_QUERY_FIELDS = 40
MAX_MAGNITUDE = 1e6  # typed numbers: large enough to show saturation, small enough to stay finite
MAX_ANSWER = 4000  # one answer of the seven questions

TOO_LARGE = (
    f"The request is too large: at most {MAX_QUERY_STRING:,} characters and "
    f"{MAX_QUERY_FIELDS} fields. Use the seed instead of typing big matrices."
)

_SPLIT = re.compile(r"[\s,]+")


def too_large(raw_query: str) -> bool:
    """Whether a raw query string is over the size caps (characters or fields)."""
    return len(raw_query) > MAX_QUERY_STRING or raw_query.count("&") >= MAX_QUERY_FIELDS


def form_errors(form: forms.Form) -> list[tuple[str, str]]:
    """(field label, message) for every error of a bound form, for the 400 fragment."""
    out = []
    for name, messages in form.errors.items():
        label = str(form.fields[name].label) if name in form.fields else "input"
        out += [(label, str(m)) for m in messages]
    return out


class RangeInput(forms.NumberInput):
    input_type = "range"


def _messages(text: str) -> dict[str, str]:
    return {
        key: text
        for key in (
            "required",
            "invalid",
            "invalid_choice",
            "min_value",
            "max_value",
            "max_length",
            "step_size",
        )
    }


def _fmt(x: float) -> str:
    return f"{x:,}" if float(x).is_integer() and abs(x) >= 1000 else f"{x:g}"


def int_field(label: str, lo: int, hi: int, initial: int, **kwargs) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        min_value=lo,
        max_value=hi,
        initial=initial,
        error_messages=_messages(f"Enter a whole number from {_fmt(lo)} to {_fmt(hi)}."),
        **kwargs,
    )


class FiniteFloatField(forms.FloatField):
    """A float in [lo, hi]; NaN, infinities and text are rejected with the allowed range."""

    def __init__(self, label: str, lo: float, hi: float, initial: float, **kwargs) -> None:
        msg = f"Enter a number from {_fmt(lo)} to {_fmt(hi)}."
        kwargs.setdefault("widget", forms.NumberInput(attrs={"step": "any"}))
        super().__init__(
            label=label,
            min_value=lo,
            max_value=hi,
            initial=initial,
            error_messages=_messages(msg),
            **kwargs,
        )


def parse_numbers(text: str, label: str) -> list[float]:
    values: list[float] = []
    for piece in _SPLIT.split(text.strip()):
        if not piece:
            continue
        try:
            value = float(piece)
        except ValueError:
            raise forms.ValidationError(f"“{piece[:20]}” is not a number.") from None
        if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
            raise forms.ValidationError(
                f"Every entry of {label} must be a finite number between "
                f"-{MAX_MAGNITUDE:,.0f} and {MAX_MAGNITUDE:,.0f}."
            )
        values.append(value)
    return values


class VectorField(forms.CharField):
    """Numbers separated by spaces or commas, 1 … max_len of them."""

    def __init__(self, label: str, initial: str, max_len: int = MAX_VECTOR, **kwargs) -> None:
        self.max_len = max_len
        example = " ".join(initial.split()[:3]) or "1 2 3"
        kwargs.setdefault(
            "widget", forms.TextInput(attrs={"spellcheck": "false", "placeholder": example})
        )
        kwargs.setdefault(
            "help_text", f"1 to {max_len} numbers separated by spaces or commas, e.g. {example}."
        )
        super().__init__(
            label=label,
            initial=initial,
            max_length=max_len * 24,
            error_messages={
                "required": f"Enter 1 to {max_len} numbers separated by spaces or commas.",
                "max_length": f"Too long: at most {max_len} numbers of up to 24 characters.",
            },
            **kwargs,
        )

    def clean(self, value):
        text = super().clean(value)
        if not text:
            return []
        values = parse_numbers(text, str(self.label))
        if not 1 <= len(values) <= self.max_len:
            raise forms.ValidationError(
                f"Enter 1 to {self.max_len} numbers separated by spaces or commas "
                f"(got {len(values)})."
            )
        return values


class MatrixField(forms.CharField):
    """Rows on separate lines (or separated by ';'), entries by spaces or commas. Optional."""

    def __init__(self, label: str, **kwargs) -> None:
        kwargs.setdefault(
            "widget",
            forms.Textarea(
                attrs={"rows": 3, "spellcheck": "false", "placeholder": "1 0 2\n0 1 -1"}
            ),
        )
        kwargs.setdefault(
            "help_text",
            "A row per line (or ;), numbers split by spaces or commas; empty for random rows.",
        )
        super().__init__(
            label=label,
            required=False,
            max_length=MAX_MATRIX_CHARS,
            error_messages={
                "max_length": f"Too long: type at most {MAX_MATRIX_CHARS:,} characters "
                "(use the seed for large matrices)."
            },
            **kwargs,
        )

    def clean(self, value):
        text = super().clean(value)
        if not text.strip():
            return None
        rows = [r for r in re.split(r"[;\n]+", text.strip()) if r.strip()]
        matrix = [parse_numbers(r, str(self.label)) for r in rows]
        widths = {len(r) for r in matrix}
        if len(widths) != 1:
            raise forms.ValidationError("Every row must have the same number of entries.")
        return matrix


class AttentionForm(forms.Form):
    tokens = int_field("tokens", 1, MAX_TOKENS, 4)
    d_k = int_field("d_k", 1, MAX_DIM, 8)
    d_v = int_field("d_v", 1, MAX_DIM, 8)
    seed = int_field("seed", 0, 2**32 - 1, 0)
    temperature = FiniteFloatField(
        "temperature τ", 0.05, 10.0, 1.0, widget=RangeInput(attrs={"step": "0.05"})
    )
    causal = forms.BooleanField(label="causal mask", required=False, initial=False)
    q = MatrixField("Q (optional: tokens × d_k)")
    k = MatrixField("K (optional: tokens × d_k)")
    v = MatrixField("V (optional: tokens × d_v)")

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if self.errors:
            return data
        shapes = {
            "q": (data["tokens"], data["d_k"]),
            "k": (data["tokens"], data["d_k"]),
            "v": (data["tokens"], data["d_v"]),
        }
        for name, (rows, cols) in shapes.items():
            matrix = data.get(name)
            if matrix is not None and (len(matrix) != rows or len(matrix[0]) != cols):
                self.add_error(
                    name,
                    f"Shape {len(matrix)} × {len(matrix[0])} does not match tokens × "
                    f"{'d_v' if name == 'v' else 'd_k'} = {rows} × {cols}.",
                )
        return data


class SoftmaxForm(forms.Form):
    logits = VectorField("logits", "2 1 0.5 -1", max_len=32)
    temperature = FiniteFloatField(
        "temperature τ", 0.01, 20.0, 1.0, widget=RangeInput(attrs={"step": "0.01"})
    )


class NormsForm(forms.Form):
    x = VectorField("x", "2 4 6 8")
    gamma = FiniteFloatField("γ (gain)", -100.0, 100.0, 1.0)
    beta = FiniteFloatField("β (shift)", -100.0, 100.0, 0.0)
    eps = FiniteFloatField("ε", 1e-12, 10.0, 1e-5)


OBJECTIVES = {
    "square": ("θ²", "2θ"),
    "quartic": ("θ⁴", "4θ³"),
}


class AdamForm(forms.Form):
    objective = forms.ChoiceField(
        label="objective",
        choices=[(key, f"f(θ) = {f}") for key, (f, _g) in OBJECTIVES.items()],
        initial="square",
        error_messages=_messages("Choose θ² (square) or θ⁴ (quartic)."),
    )
    theta0 = FiniteFloatField("start θ₀", -100.0, 100.0, 3.0)
    lr = FiniteFloatField("learning rate η", 1e-6, 1.0, 0.1)
    beta1 = FiniteFloatField("β₁", 0.0, 0.999, 0.9)
    beta2 = FiniteFloatField("β₂", 0.0, 0.99999, 0.999)
    eps = FiniteFloatField("ε", 1e-12, 1.0, 1e-8)
    steps = int_field("steps", 1, MAX_STEPS, 200)


class RopeForm(forms.Form):
    d_k = int_field("d_k (even)", 2, MAX_DIM, 8)
    base = FiniteFloatField("base", 1.0, 1e9, 10000.0)
    positions = VectorField("positions", "0 1 2 3 5 8", max_len=16)
    heads = int_field("heads (for the before-split comparison)", 1, 8, 2)
    seed = int_field("seed", 0, 2**32 - 1, 0)

    def clean_d_k(self):
        d_k = self.cleaned_data["d_k"]
        if d_k % 2:
            raise forms.ValidationError(
                f"Enter an even whole number from 2 to {MAX_DIM}: RoPE rotates pairs of features."
            )
        return d_k

    def clean_positions(self):
        positions = self.cleaned_data["positions"]
        if any(p != int(p) or not 0 <= p <= 100_000 for p in positions):
            raise forms.ValidationError("Positions must be whole numbers from 0 to 100,000.")
        return [int(p) for p in positions]

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if "d_k" in data and "heads" in data and data["d_k"] * data["heads"] > MAX_DIM:
            self.add_error(
                "heads",
                f"heads × d_k must be at most {MAX_DIM} (d_model); "
                f"with d_k = {data['d_k']} use at most {MAX_DIM // data['d_k']} heads.",
            )
        return data


class DecodeForm(forms.Form):
    latex = forms.CharField(
        label="Equation (LaTeX or Unicode)",
        max_length=MAX_LATEX,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        error_messages={
            "required": "Paste an equation: 1 to 2,000 characters of LaTeX or Unicode.",
            "max_length": f"Too long: paste at most {MAX_LATEX:,} characters.",
        },
    )


QUESTIONS: list[tuple[str, str, str]] = [
    ("output", "What comes out?", "Name the left-hand side: what is computed, and what is it?"),
    ("inputs", "What goes in?", "Which symbols arrive from outside: data, or earlier results?"),
    ("learned", "What is learned?", "Which symbols does training set? Which are picked by hand?"),
    ("shapes", "What shape is everything?", "Write each symbol's shape: tokens × d_k …"),
    ("operations", "What does each operation do?", "Go through every operator, inside out."),
    ("extremes", "What happens at the extremes?", "Push each constant to 0 and to ∞."),
    ("ablations", "What breaks without each part?", "Delete one piece at a time: what fails?"),
]


class WalkthroughForm(forms.Form):
    """The seven questions about one equation, with the equation (or a saved walk-through)."""

    latex = forms.CharField(
        label="Equation (LaTeX or Unicode)",
        max_length=MAX_LATEX,
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}),
        error_messages={
            "required": "Give the equation: 1 to 2,000 characters of LaTeX or Unicode.",
            "max_length": f"Too long: at most {MAX_LATEX:,} characters.",
        },
    )
    equation = forms.IntegerField(required=False, widget=forms.HiddenInput, min_value=1)
    walkthrough = forms.IntegerField(required=False, widget=forms.HiddenInput, min_value=1)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for key, question, hint in QUESTIONS:
            self.fields[key] = forms.CharField(
                label=question,
                help_text=hint,
                required=False,
                max_length=MAX_ANSWER,
                widget=forms.Textarea(attrs={"rows": 3}),
                error_messages={"max_length": f"Keep each answer under {MAX_ANSWER:,} characters."},
            )

    def answers(self) -> dict[str, str]:
        return {key: self.cleaned_data.get(key, "") for key, _q, _h in QUESTIONS}

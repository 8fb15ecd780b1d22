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
from django.utils.html import format_html
from django.utils.safestring import SafeString

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


def typeset(latex: str, note: str = "", note_latex: str = "") -> SafeString:
    """A field label with its symbol typeset (MathML), e.g. "d_k (key width)"."""
    from platform.rendering import render_math

    if not note:
        return render_math(latex)
    if note_latex:
        return format_html("{} ({}{})", render_math(latex), note, render_math(note_latex))
    return format_html("{} ({})", render_math(latex), note)


class RangeInput(forms.NumberInput):
    input_type = "range"


def tau_of_scale(s: float, lo: float, hi: float) -> float:
    """The slider position s ∈ [−1, 1] as a temperature: log scale, τ = 1 at s = 0,
    τ = lo at s = −1 and τ = hi at s = 1 (each half geometric)."""
    return lo ** (-s) if s < 0 else hi**s


def scale_of_tau(tau: float, lo: float, hi: float) -> float:
    """The inverse of :func:`tau_of_scale`, clamped to [−1, 1]."""
    s = -math.log(tau) / math.log(lo) if tau < 1 else math.log(tau) / math.log(hi)
    return min(1.0, max(-1.0, s))


def tau_text(tau: float) -> str:
    """τ as the slider's read-out shows it: three significant digits (JS does the same)."""
    return f"{tau:.3g}"


class LogTemperatureSlider(forms.Widget):
    """A temperature slider on a log scale with τ = 1 in the middle.

    The range input is named ``<name>_scale`` and moves s ∈ [−1, 1]; the field still takes τ:
    a query may give ``<name>=τ`` (links, tests, the API) or ``<name>_scale=s`` (the slider,
    with or without JavaScript), and the scale wins when both are there. The read-out next to
    it shows τ, never s.
    """

    def __init__(self, lo: float, hi: float, attrs: dict | None = None) -> None:
        super().__init__(attrs)
        self.lo, self.hi = lo, hi

    def value_from_datadict(self, data, files, name):
        scale = data.get(f"{name}_scale")
        if scale in (None, ""):
            return data.get(name)
        try:
            s = float(scale)
        except (TypeError, ValueError):
            return scale  # the field says what a number must be
        if not math.isfinite(s):
            return scale
        return repr(tau_of_scale(s, self.lo, self.hi))

    def render(self, name, value, attrs=None, renderer=None):
        from django.utils.html import format_html

        try:
            tau = float(value)
        except (TypeError, ValueError):
            tau = 1.0
        if not math.isfinite(tau) or tau <= 0:
            tau = 1.0
        s = scale_of_tau(tau, self.lo, self.hi)
        element_id = (attrs or {}).get("id", f"id_{name}")
        return format_html(
            '<input type="range" name="{}_scale" id="{}" min="-1" max="1" step="0.01" '
            'value="{}" data-tau-min="{}" data-tau-max="{}" aria-valuetext="τ = {}">'
            '<output class="readout" for="{}" data-readout-for="{}">{}</output>',
            name, element_id, f"{s:.4f}", self.lo, self.hi, tau_text(tau),
            element_id, element_id, tau_text(tau),
        )  # fmt: skip


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

    def __init__(self, label: str, *, name: str = "", **kwargs) -> None:
        self.name = name or str(label)  # how error messages call it, as plain text
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
        matrix = [parse_numbers(r, self.name) for r in rows]
        widths = {len(r) for r in matrix}
        if len(widths) != 1:
            raise forms.ValidationError("Every row must have the same number of entries.")
        return matrix


class AttentionForm(forms.Form):
    tokens = int_field("tokens", 1, MAX_TOKENS, 4)
    d_k = int_field(typeset("d_k", "key width"), 1, MAX_DIM, 8)
    d_v = int_field(typeset("d_v", "value width"), 1, MAX_DIM, 8)
    seed = int_field("seed", 0, 2**32 - 1, 0)
    temperature = FiniteFloatField(
        "temperature τ", 0.05, 10.0, 1.0, widget=LogTemperatureSlider(0.05, 10.0)
    )
    causal = forms.BooleanField(label="causal mask", required=False, initial=False)
    q = MatrixField(typeset("Q", "optional: tokens × ", "d_k"), name="Q")
    k = MatrixField(typeset("K", "optional: tokens × ", "d_k"), name="K")
    v = MatrixField(typeset("V", "optional: tokens × ", "d_v"), name="V")

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
        "temperature τ", 0.01, 20.0, 1.0, widget=LogTemperatureSlider(0.01, 20.0)
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
    d_k = int_field(typeset("d_k", "even"), 2, MAX_DIM, 8)
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


class CrossEntropyForm(forms.Form):
    logits = VectorField("logits", "2 1 0.1", max_len=32)
    target = int_field("target class y", 0, 31, 0)

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if "logits" in data and "target" in data and data["target"] >= len(data["logits"]):
            self.add_error(
                "target",
                f"Enter a class from 0 to {len(data['logits']) - 1}: "
                f"there are {len(data['logits'])} logits.",
            )
        return data


MAX_HEADS = 8
MAX_MHA_TOKENS = 16


class MultiHeadForm(forms.Form):
    tokens = int_field("tokens", 1, MAX_MHA_TOKENS, 5)
    d_model = int_field("d_model", 1, MAX_DIM, 8)
    heads = int_field("heads h", 1, MAX_HEADS, 2)
    seed = int_field("seed", 0, 2**32 - 1, 0)
    causal = forms.BooleanField(label="causal mask", required=False, initial=False)

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if "d_model" in data and "heads" in data and data["d_model"] % data["heads"]:
            self.add_error(
                "heads",
                f"heads must divide d_model = {data['d_model']} evenly, so every head gets "
                "the same width d_model / h.",
            )
        return data


ADAMW_OBJECTIVES = {
    **OBJECTIVES,
    "flat": ("0", "0"),
}


class AdamWForm(forms.Form):
    objective = forms.ChoiceField(
        label="objective",
        choices=[
            ("square", "f(θ) = θ²"),
            ("quartic", "f(θ) = θ⁴"),
            ("flat", "f(θ) = 0 (a weight the loss ignores)"),
        ],
        initial="flat",
        error_messages=_messages("Choose θ² (square), θ⁴ (quartic) or 0 (flat)."),
    )
    theta0 = FiniteFloatField("start θ₀", -100.0, 100.0, 1.0)
    lr = FiniteFloatField("learning rate η", 1e-6, 1.0, 0.01)
    weight_decay = FiniteFloatField("weight decay λ", 0.0, 1.0, 0.1)
    steps = int_field("steps", 1, MAX_STEPS, 200)

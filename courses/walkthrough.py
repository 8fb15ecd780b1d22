"""The notation explorer's Decode box and the seven-questions walk-through (views and forms).

Both read the glossary once per request (one query for every Symbol row). The explorer is a pure
GET of its query string; the walk-through saves a signed-in learner's answers with a
CSRF-protected POST and reopens them with ``?walkthrough=<id>`` for their owner only.
"""

from __future__ import annotations

from functools import lru_cache

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods

from courses.explorer import Decoded, _attr, decode, load_symbols
from courses.models import Chapter, Equation, Symbol, Walkthrough
from courses.widget_forms import MAX_LATEX, MAX_QUERY_STRING, DecodeForm
from courses.widgets import cacheable, form_errors
from platform.http import HtmxHttpRequest
from platform.rendering import render_markdown, render_math

EXPLORER_MAX_AGE = 5 * 60
MAX_ANSWER = 4000

QUESTIONS: list[tuple[str, str, str]] = [
    ("output", "What comes out?", "Name the left-hand side: what is computed, and what is it?"),
    ("inputs", "What goes in?", "Which symbols arrive from outside: data, or earlier results?"),
    ("learned", "What is learned?", "Which symbols does training set? Which are picked by hand?"),
    ("shapes", "What shape is everything?", "Write each symbol's shape: tokens × d_k …"),
    ("operations", "What does each operation do?", "Go through every operator, inside out."),
    ("extremes", "What happens at the extremes?", "Push each constant to 0 and to ∞."),
    ("ablations", "What breaks without each part?", "Delete one piece at a time: what fails?"),
]


@lru_cache(maxsize=2048)
def _explain(markdown: str) -> str:
    """Glossary explanations as HTML, memoised in-process (a handful of short strings)."""
    return str(render_markdown(markdown))


def _entries_for_template(decoded: Decoded) -> list[dict]:
    rows = []
    for e in decoded.entries:
        symbol = e.symbol
        rows.append(
            {
                "kind": e.kind,
                "key": e.key,
                "name": e.name,
                "glyph": getattr(symbol, "glyph", "") if symbol is not None else "",
                "latex": getattr(symbol, "latex", "") if symbol is not None else "",
                "explanation": _explain(e.explanation) if e.kind == "symbol" else e.explanation,
                "occurrences": sorted(set(e.occurrences)),
                "count": e.count,
            }
        )
    return rows


def _too_large(request: HttpRequest) -> bool:
    return len(request.META.get("QUERY_STRING", "")) > MAX_QUERY_STRING


@require_GET
def explorer(request: HtmxHttpRequest) -> HttpResponse:
    """Decode box: render a pasted equation and name every token (GET ?latex=…)."""
    context: dict = {"errors": [], "decoded": None}
    status = 200
    if _too_large(request):
        form = DecodeForm()
        context["errors"] = [("request", f"Too large: at most {MAX_LATEX:,} characters.")]
        status = 400
    elif "latex" in request.GET:
        form = DecodeForm(request.GET)
        if form.is_valid():
            latex = form.cleaned_data["latex"]
            decoded = decode(latex, load_symbols())
            context.update(
                decoded=decoded,
                rendered=render_math(latex, display=True),
                entries=_entries_for_template(decoded),
                walkthrough_url=reverse("widgets:walkthrough") + "?" + urlencode({"latex": latex}),
            )
        else:
            context["errors"] = form_errors(form)
            status = 400
    else:
        form = DecodeForm()
    context["form"] = form
    template = "courses/widgets/explorer.html" + ("#result" if request.htmx else "")
    response = render(request, template, context, status=status)
    return cacheable(request, response, EXPLORER_MAX_AGE)


class WalkthroughForm(forms.Form):
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


def _left_side(latex: str) -> str:
    depth = 0
    for i, ch in enumerate(latex):
        depth += ch in "({["
        depth -= ch in ")}]"
        if ch == "=" and depth == 0 and i > 0:
            return latex[:i].strip()
    return ""


def prefill(latex: str, decoded: Decoded, equation: Equation | None) -> dict[str, str]:
    """Starting answers from what the explorer recognised; the learner edits them.

    Each recognised symbol's ``kind`` (edited in admin with the glossary) sorts it into inputs,
    learned parameters, constants and operations; its ``extremes`` prompt seeds question six.
    """
    Kind = Symbol.Kind
    symbols = [(e, _attr(e.symbol, "kind"), _attr(e.symbol, "extremes")) for e in decoded.symbols]

    def names(*kinds: str) -> str:
        return "; ".join(
            f"{e.occurrences[0]} — {e.name}" for e, kind, _ in symbols if kind in kinds
        )

    lhs = _left_side(latex)
    shapes = equation.shape_note if equation and equation.shape_note else ""
    if not shapes:
        shapes = "; ".join(
            f"{e.occurrences[0]}: ? × ?" for e, kind, _ in symbols if kind == Kind.QUANTITY
        )
    return {
        "output": f"{lhs}: " if lhs else "",
        "inputs": names(Kind.QUANTITY),
        "learned": names(Kind.LEARNED),
        "shapes": shapes,
        "operations": names(Kind.OPERATION),
        "extremes": "\n".join(prompt for _, _, prompt in symbols if prompt),
        "ablations": "\n".join(
            f"Without {e.occurrences[0]} ({e.name}): ?"
            for e, kind, _ in symbols
            if kind in (Kind.OPERATION, Kind.CONSTANT) and e.key not in {"fraction", "superscript"}
        ),
    }


def _equation(request: HttpRequest, pk) -> Equation:
    visible = Chapter.objects.visible_to(request.user)
    try:
        return Equation.objects.select_related("chapter__course").get(
            pk=int(pk), chapter__in=visible
        )
    except (ValueError, TypeError, OverflowError, Equation.DoesNotExist):
        raise Http404("No such equation.") from None


def _owned(request: HttpRequest, pk) -> Walkthrough:
    if not request.user.is_authenticated:
        raise Http404("No such walkthrough.")
    try:
        return Walkthrough.objects.select_related("equation").get(pk=int(pk), user=request.user)
    except (ValueError, TypeError, OverflowError, Walkthrough.DoesNotExist):
        raise Http404("No such walkthrough.") from None


def _page(
    request: HttpRequest,
    form: WalkthroughForm,
    latex: str,
    *,
    equation: Equation | None,
    saved: Walkthrough | None,
    status: int = 200,
) -> HttpResponse:
    decoded = decode(latex, load_symbols()) if latex else None
    fields = [(form[key], question, hint) for key, question, hint in QUESTIONS]
    context = {
        "form": form,
        "questions": fields,
        "latex": latex,
        "rendered": render_math(latex, display=True) if latex else "",
        "decoded": decoded,
        "entries": _entries_for_template(decoded) if decoded else [],
        "equation": equation,
        "saved": saved,
        "login_url": reverse("account_login") + "?" + urlencode({"next": request.get_full_path()}),
        "errors": form_errors(form) if form.is_bound and form.errors else [],
        "login_needed": status == 403,
    }
    return render(request, "courses/widgets/walkthrough.html", context, status=status)


@require_http_methods(["GET", "POST"])
def walkthrough(request: HttpRequest) -> HttpResponse:
    """The seven questions for ``?equation=<id>``, ``?latex=…`` or a saved ``?walkthrough=<id>``."""
    if request.method == "POST":
        return _save(request)
    if _too_large(request):
        form = WalkthroughForm(data={"latex": ""})
        form.is_valid()
        return _page(request, form, "", equation=None, saved=None, status=400)
    saved = equation = None
    latex = ""
    answers: dict[str, str] = {}
    if request.GET.get("walkthrough"):
        saved = _owned(request, request.GET["walkthrough"])
        equation, latex = saved.equation, saved.latex
        answers = {k: str(v) for k, v in (saved.answers or {}).items()}
    elif request.GET.get("equation"):
        equation = _equation(request, request.GET["equation"])
        latex = equation.latex
    elif request.GET.get("latex"):
        latex = request.GET["latex"]
        if len(latex) > MAX_LATEX:
            form = WalkthroughForm(data={"latex": latex})
            form.is_valid()
            return _page(request, form, "", equation=None, saved=None, status=400)
    initial = {"latex": latex, "equation": equation.pk if equation else None}
    if saved:
        initial["walkthrough"] = saved.pk
        initial.update(answers)
    elif latex:
        initial.update(prefill(latex, decode(latex, load_symbols()), equation))
    form = WalkthroughForm(initial=initial)
    response = _page(request, form, latex, equation=equation, saved=saved)
    response["Cache-Control"] = "private, no-cache"  # a learner's own answers
    return response


def _save(request: HttpRequest) -> HttpResponse:
    form = WalkthroughForm(request.POST)
    valid = form.is_valid()
    data = form.cleaned_data if valid else {}
    latex = data.get("latex") or request.POST.get("latex", "")[:MAX_LATEX]
    equation = _equation(request, data["equation"]) if data.get("equation") else None
    if not request.user.is_authenticated:
        return _page(request, form, latex, equation=equation, saved=None, status=403)
    saved = _owned(request, data["walkthrough"]) if data.get("walkthrough") else None
    if not valid:
        return _page(request, form, latex, equation=equation, saved=saved, status=400)
    if saved is None:
        saved = Walkthrough(user=request.user)
    saved.equation = equation
    saved.latex = latex
    saved.answers = form.answers()
    saved.save()
    messages.success(request, "Saved. Your walkthroughs are listed on your dashboard.")
    return redirect(reverse("widgets:walkthrough") + f"?walkthrough={saved.pk}")

"""The seven-questions walk-through of an equation, prefilled from the notation explorer.

It reads the glossary once per request (one query for every Symbol row), saves a signed-in
learner's answers with a CSRF-protected POST and reopens them with ``?walkthrough=<id>`` for
their owner only.
"""

from __future__ import annotations

import re

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from courses.models import SEVEN_QUESTIONS, Chapter, Equation, Symbol, Walkthrough
from courses.widgets.explorer import Decoded, decode, load_symbols
from courses.widgets.forms import MAX_LATEX, QUESTIONS, WalkthroughForm, form_errors, too_large
from courses.widgets.tutor import model_answers
from courses.widgets.views import entry_rows
from platform.http import HtmxHttpRequest
from platform.rendering import latex_to_text, render_math

OVERVIEW = len(SEVEN_QUESTIONS) + 1  # the step after the last question: all seven at once


def _left_side(latex: str) -> str:
    depth = 0
    for i, ch in enumerate(latex):
        depth += ch in "({["
        depth -= ch in ")}]"
        if ch == "=" and depth == 0 and i > 0:
            return latex[:i].strip()
    return ""


def _readable(entry) -> str:
    """How a recognised symbol reads in a text answer: its glyph, else its source as text."""
    return getattr(entry.symbol, "glyph", "") or latex_to_text(_scripts(entry.occurrences[0]))


def prefill(latex: str, decoded: Decoded, equation: Equation | None) -> dict[str, str]:
    """Starting answers from what the explorer recognised, as plain text; the learner edits them.

    Each recognised symbol's ``kind`` (edited in admin with the glossary) sorts it into inputs,
    learned parameters, constants and operations; its ``extremes`` prompt seeds question six.
    """
    Kind = Symbol.Kind
    symbols = [(e, e.symbol.kind, e.symbol.extremes) for e in decoded.symbols]

    def names(*kinds: str) -> str:
        return "; ".join(f"{_readable(e)} — {e.name}" for e, kind, _ in symbols if kind in kinds)

    lhs = latex_to_text(_scripts(_left_side(latex)))
    shapes = latex_to_text_markdown(equation.shape_note) if equation and equation.shape_note else ""
    if not shapes:
        shapes = "; ".join(
            f"{_readable(e)}: ? × ?" for e, kind, _ in symbols if kind == Kind.QUANTITY
        )
    return {
        "output": f"{lhs}: " if lhs else "",
        "inputs": names(Kind.QUANTITY),
        "learned": names(Kind.LEARNED),
        "shapes": shapes,
        "operations": names(Kind.OPERATION),
        "extremes": "\n".join(prompt for _, _, prompt in symbols if prompt),
        "ablations": "\n".join(
            f"Without {_readable(e)} ({e.name}): ?"
            for e, kind, _ in symbols
            if kind in (Kind.OPERATION, Kind.CONSTANT) and e.key not in {"fraction", "superscript"}
        ),
    }


def latex_to_text_markdown(markdown: str) -> str:
    """A shape note (Markdown with $math$) as plain text: "Q, K: tokens × dₖ"."""
    from platform.rendering import markdown_to_text

    return _scripts(" ".join(markdown_to_text(markdown).split()))


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


_SUBSCRIPT = dict(
    zip("0123456789aehijklmnoprstuvx+-", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋", strict=True)
)
_SUPERSCRIPT = dict(zip("0123456789in+-T", "⁰¹²³⁴⁵⁶⁷⁸⁹ⁱⁿ⁺⁻ᵀ", strict=True))


def _scripts(text: str) -> str:
    """d_k → dₖ, σ^2 → σ², where Unicode has the character; anything else stays as it is."""
    text = _SUB.sub(lambda m: _SUBSCRIPT.get(m[1] or m[2], m[0]), text)
    return _SUP.sub(lambda m: _SUPERSCRIPT.get(m[1] or m[2], m[0]), text)


_SUB = re.compile(r"_(?:\{([0-9a-z+-])\}|([0-9a-z]))")
_SUP = re.compile(r"\^(?:\{([0-9inT+-])\}|([0-9inT]))")


def _step(raw, default: int) -> int:
    try:
        step = int(raw)
    except (TypeError, ValueError):
        return default
    return min(max(step, 1), OVERVIEW)


def _page(
    request: HttpRequest,
    form: WalkthroughForm,
    latex: str,
    *,
    equation: Equation | None,
    saved: Walkthrough | None,
    step: int = 1,
    revealed: bool = False,
    status: int = 200,
) -> HttpResponse:
    decoded = decode(latex, load_symbols()) if latex else None
    back_here = urlencode({"next": request.get_full_path()})
    models = model_answers(equation, decoded) if latex else {}
    questions = []
    for number, (key, question, hint) in enumerate(QUESTIONS, start=1):
        field = form[key]
        questions.append(
            {
                "number": number,
                "key": key,
                "question": question,
                "hint": hint,
                "field": field,
                "answer": field.value() or "",
                "model": models.get(key),
                "current": number == step,
                "done": number < step,
            }
        )
    context = {
        "form": form,
        "questions": questions,
        "step": step,
        "overview": step == OVERVIEW,
        "current": questions[step - 1] if step < OVERVIEW else None,
        "revealed": revealed or step == OVERVIEW,
        "last_step": len(QUESTIONS),
        "latex": latex,
        "rendered": render_math(latex, display=True) if latex else "",
        "decoded": decoded,
        "entries": entry_rows(decoded) if decoded else [],
        "equation": equation,
        "saved": saved,
        "login_url": reverse("account_login") + "?" + back_here,
        "signup_url": reverse("account_signup") + "?" + back_here,
        "errors": form_errors(form) if form.is_bound and form.errors else [],
        "login_needed": status == 403,
    }
    template = "courses/widgets/walkthrough.html"
    if getattr(request, "htmx", False):
        template += "#tutor"
    return render(request, template, context, status=status)


@require_http_methods(["GET", "POST"])
def walkthrough(request: HtmxHttpRequest) -> HttpResponse:
    """The tutor for ``?equation=<id>``, ``?latex=…`` or a saved ``?walkthrough=<id>``."""
    if request.method == "POST":
        return _post(request)
    if too_large(request.META.get("QUERY_STRING", "")):
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
    step = _step(request.GET.get("step"), OVERVIEW if saved else 1)
    response = _page(request, form, latex, equation=equation, saved=saved, step=step)
    response["Cache-Control"] = "private, no-cache"  # a learner's own answers
    return response


def _post(request: HtmxHttpRequest) -> HttpResponse:
    """Move through the questions (reveal, next, back, go to one) or save every answer."""
    action = request.POST.get("action", "save")
    step = _step(request.POST.get("goto") or request.POST.get("step"), 1)
    if action == "save" and not request.POST.get("goto"):
        return _save(request, step)
    form = WalkthroughForm(request.POST)
    valid = form.is_valid()
    data = form.cleaned_data if valid else {}
    latex = data.get("latex") or request.POST.get("latex", "")[:MAX_LATEX]
    equation = _equation(request, data["equation"]) if data.get("equation") else None
    saved = _owned(request, data["walkthrough"]) if data.get("walkthrough") else None
    if not valid:
        return _page(request, form, latex, equation=equation, saved=saved, step=step, status=400)
    if request.POST.get("goto"):
        revealed = False
    elif action == "next":
        step, revealed = min(step + 1, OVERVIEW), False
    elif action == "back":
        step, revealed = max(step - 1, 1), False
    else:  # reveal
        revealed = True
    return _page(request, form, latex, equation=equation, saved=saved, step=step, revealed=revealed)


def _save(request: HtmxHttpRequest, step: int) -> HttpResponse:
    form = WalkthroughForm(request.POST)
    valid = form.is_valid()
    data = form.cleaned_data if valid else {}
    latex = data.get("latex") or request.POST.get("latex", "")[:MAX_LATEX]
    equation = _equation(request, data["equation"]) if data.get("equation") else None
    if not request.user.is_authenticated:
        return _page(request, form, latex, equation=equation, saved=None, step=step, status=403)
    saved = _owned(request, data["walkthrough"]) if data.get("walkthrough") else None
    if not valid:
        return _page(request, form, latex, equation=equation, saved=saved, step=step, status=400)
    if saved is None:
        saved = Walkthrough(user=request.user)
    saved.equation = equation
    saved.latex = latex
    saved.answers = form.answers()
    saved.save()
    messages.success(request, "Saved. Your walkthroughs are listed on your dashboard.")
    url = reverse("widgets:walkthrough") + f"?walkthrough={saved.pk}"
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)

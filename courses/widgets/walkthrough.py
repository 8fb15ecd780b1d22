"""The seven-questions walk-through of an equation, prefilled from the notation explorer.

It reads the glossary once per request (one query for every Symbol row), saves a signed-in
learner's answers with a CSRF-protected POST and reopens them with ``?walkthrough=<id>`` for
their owner only.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods

from courses.models import Chapter, Equation, Symbol, Walkthrough
from courses.widgets.explorer import Decoded, decode, load_symbols
from courses.widgets.forms import MAX_LATEX, QUESTIONS, WalkthroughForm, form_errors, too_large
from courses.widgets.views import entry_rows
from platform.rendering import render_math


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
    symbols = [(e, e.symbol.kind, e.symbol.extremes) for e in decoded.symbols]

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
    back_here = urlencode({"next": request.get_full_path()})
    context = {
        "form": form,
        "questions": fields,
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
    return render(request, "courses/widgets/walkthrough.html", context, status=status)


@require_http_methods(["GET", "POST"])
def walkthrough(request: HttpRequest) -> HttpResponse:
    """The seven questions for ``?equation=<id>``, ``?latex=…`` or a saved ``?walkthrough=<id>``."""
    if request.method == "POST":
        return _save(request)
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

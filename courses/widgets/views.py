"""Widget endpoints: one view for every registered widget, the index and the notation explorer.

A plain GET returns the whole page; an htmx GET (``request.htmx``) returns the ``#result``
partial of the same template with the same context. Bad input returns the same template with the
errors, status 400. Results are pure functions of the query string, so the fragments are
``Cache-Control: public`` (full pages carry the visitor's navigation and CSRF token, so they are
``private``); both ``Vary: HX-Request``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from courses.widgets.explorer import Decoded, decode, load_symbols
from courses.widgets.forms import MAX_LATEX, DecodeForm, form_errors, too_large
from courses.widgets.registry import WIDGETS, run_widget, widget_csv
from platform.http import HtmxHttpRequest
from platform.rendering import render_markdown, render_math

FRAGMENT_MAX_AGE = 60 * 60 * 24
PAGE_MAX_AGE = 60
EXPLORER_MAX_AGE = 5 * 60


def cacheable(request: HtmxHttpRequest, response: HttpResponse, max_age: int) -> HttpResponse:
    """Fragments public for ``max_age`` seconds, full pages private for a minute."""
    patch_vary_headers(response, ["HX-Request"])
    if request.htmx:
        patch_cache_control(response, public=True, max_age=max_age)
    else:
        patch_cache_control(response, private=True, max_age=PAGE_MAX_AGE)
    return response


@require_GET
def widget(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The widget registered under ``key``: its form and result, or the result alone for htmx."""
    found = WIDGETS.get(key)
    if found is None:
        raise Http404("No such widget.")
    if request.GET.get("format") == "csv":
        text, status = widget_csv(found, request)
        response = HttpResponse(text, status=status, content_type="text/csv; charset=utf-8")
        if status == 200:
            matrix = request.GET["matrix"]
            response["Content-Disposition"] = f'attachment; filename="{key}-{matrix}.csv"'
        else:
            response["Content-Type"] = "text/plain; charset=utf-8"
        return cacheable(request, response, FRAGMENT_MAX_AGE)
    context, status = run_widget(found, request, f"w-{key}")
    context["widget"] = found
    template = found.result_template if request.htmx else found.template
    return cacheable(request, render(request, template, context, status=status), FRAGMENT_MAX_AGE)


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "courses/widgets/index.html", {"widgets": list(WIDGETS.values())})


@lru_cache(maxsize=2048)
def _explain(markdown: str) -> str:
    """Glossary explanations as HTML, memoised in-process (a handful of short strings)."""
    return str(render_markdown(markdown))


def entry_rows(decoded: Decoded) -> list[dict[str, Any]]:
    """The explorer's findings as rows of the ``_entries.html`` table."""
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


@require_GET
def explorer(request: HtmxHttpRequest) -> HttpResponse:
    """Decode box: render a pasted equation and name every token (GET ?latex=…)."""
    context: dict[str, Any] = {"errors": [], "decoded": None}
    status = 200
    if too_large(request.META.get("QUERY_STRING", "")):
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
                entries=entry_rows(decoded),
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

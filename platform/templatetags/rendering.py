"""Template filters for the shared renderer: ``{{ text|markdown }}``, ``{{ latex|math }}``."""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from platform import rendering

register = template.Library()

_PRE = re.compile(r"<pre(?=[\s>])")


def keyboard_scrollable(html: str, label: str) -> SafeString:
    """Every ``<pre>`` made reachable by the keyboard and named, so a reader who cannot use a
    mouse can scroll a long line sideways (axe: scrollable-region-focusable)."""
    attributes = f' tabindex="0" role="region" aria-label="{escape(label)}"'
    return mark_safe(_PRE.sub(lambda m: "<pre" + attributes, html))  # noqa: S308 - ours


@register.filter(name="markdown")
def markdown_filter(source: str) -> SafeString:
    return keyboard_scrollable(rendering.render_markdown(source or ""), "Code")


@register.filter(name="math")
def math_filter(latex: str) -> SafeString:
    return rendering.render_math(latex or "")


@register.filter(name="display_math")
def display_math_filter(latex: str) -> SafeString:
    return rendering.render_math(latex or "", display=True)


@register.simple_tag
def code(source: str, language: str = "", label: str = "Code") -> SafeString:
    return keyboard_scrollable(rendering.highlight_code(source or "", language), label)

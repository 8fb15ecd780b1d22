"""Template filters for the shared renderer: ``{{ text|markdown }}``, ``{{ latex|math }}``."""

from django import template
from django.utils.safestring import SafeString

from platform import rendering

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(source: str) -> SafeString:
    return rendering.render_markdown(source or "")


@register.filter(name="markdown_inline")
def markdown_inline_filter(source: str) -> SafeString:
    return rendering.render_markdown_inline(source or "")


@register.filter(name="first_block")
def first_block_filter(source: str) -> SafeString:
    return rendering.render_first_block(source or "")


@register.filter(name="math")
def math_filter(latex: str) -> SafeString:
    return rendering.render_math(latex or "")


@register.filter(name="display_math")
def display_math_filter(latex: str) -> SafeString:
    return rendering.render_math(latex or "", display=True)


@register.simple_tag
def code(source: str, language: str = "") -> SafeString:
    return rendering.highlight_code(source or "", language)

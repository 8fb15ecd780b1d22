"""Temporary: replaced by the widgets work. Renders a link to the widget's own page."""

from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag(takes_context=True)
def widget_embed(context, key: str):
    return format_html('<p><a href="/widgets/">Open the {} widget</a></p>', key)

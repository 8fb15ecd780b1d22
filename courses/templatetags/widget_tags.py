"""``{% widget_embed "attention" %}``: a widget's form and default result inside a chapter page.

It renders the same ``courses/widgets/_widget.html`` as the widget's own page, with element ids
made unique per page, so the htmx target sits inside the embed and the plain form submits to the
widget page.
"""

from django import template
from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.safestring import SafeString

from courses.widgets.registry import WIDGETS, run_widget

register = template.Library()


@register.simple_tag(takes_context=True)
def widget_embed(context, key: str) -> SafeString:
    widget = WIDGETS.get(key)
    if widget is None:
        return format_html('<p class="muted">Unknown widget “{}”.</p>', key)
    request = context.get("request")
    # Ids already used on this page: kept on the request, since every included template gets
    # its own render_context.
    if request is not None:
        used: set[str] = getattr(request, "widget_embed_ids", None) or set()
    else:
        used = context.render_context.get("widget_embed_ids") or set()
    if request is not None:
        request.widget_embed_ids = used
    else:
        context.render_context["widget_embed_ids"] = used
    uid = f"embed-{key}"
    n = 2
    while uid in used:
        uid, n = f"embed-{key}-{n}", n + 1
    widget_context, _status = run_widget(widget, None, uid)
    widget_context.update(widget=widget)
    used.add(uid)
    return render_to_string("courses/widgets/_embed.html", widget_context, request=request)

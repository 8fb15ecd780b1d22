"""A live preview beside every Markdown and LaTeX field in admin.

Models declare their maths fields (``LATEX_FIELDS``: one formula; ``MARKDOWN_FIELDS``: text with
``$…$``); :class:`MathPreviewMixin` gives those fields a widget that asks the staff-only
``platform:preview`` endpoint (htmx GET, debounced) for the rendered fragment and shows it, with
the same problem the save would refuse, under the field. No inline script: htmx and a small
static file (``platform/admin_preview.js``) come in as the widget's media.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import models
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

PREVIEW_TRIGGER = "input changed delay:400ms, load"


class _PreviewMixin:
    kind = "markdown"

    class Media:
        css = {"all": ["platform/admin_preview.css"]}
        js = ["django_htmx/htmx-2.min.js", "platform/admin_preview.js"]

    def get_context(self, name: str, value: Any, attrs: dict | None) -> dict:
        context = super().get_context(name, value, attrs)  # type: ignore[misc]
        widget_attrs = context["widget"]["attrs"]
        target = f"{widget_attrs.get('id') or name}-preview"
        widget_attrs.update(
            {
                "hx-get": f"{reverse('preview')}?kind={self.kind}",
                "hx-trigger": PREVIEW_TRIGGER,
                "hx-target": f"#{target}",
                "hx-swap": "innerHTML",
                "aria-describedby": target,
            }
        )
        return context

    def render(self, name: str, value: Any, attrs: dict | None = None, renderer=None) -> SafeString:
        field = super().render(name, value, attrs, renderer)  # type: ignore[misc]
        target = f"{(attrs or {}).get('id') or name}-preview"
        return field + format_html(
            '<div class="math-preview" id="{}" aria-live="polite" data-kind="{}"></div>',
            target,
            self.kind,
        )


class MarkdownPreviewTextarea(_PreviewMixin, forms.Textarea):
    kind = "markdown"


class MarkdownPreviewInput(_PreviewMixin, forms.TextInput):
    kind = "markdown"


class LatexPreviewTextarea(_PreviewMixin, forms.Textarea):
    kind = "latex"


class LatexPreviewInput(_PreviewMixin, forms.TextInput):
    kind = "latex"


def preview_widget(db_field: models.Field, kind: str) -> forms.Widget:
    long = isinstance(db_field, models.TextField)
    if kind == "latex":
        return LatexPreviewTextarea(attrs={"rows": 3}) if long else LatexPreviewInput()
    return MarkdownPreviewTextarea() if long else MarkdownPreviewInput()


class MathPreviewMixin:
    """For a ModelAdmin or an inline: the model's maths fields get the preview widget."""

    model: type[models.Model]

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name in getattr(self.model, "LATEX_FIELDS", ()):
            kwargs["widget"] = preview_widget(db_field, "latex")
        elif db_field.name in getattr(self.model, "MARKDOWN_FIELDS", ()):
            kwargs["widget"] = preview_widget(db_field, "markdown")
        return super().formfield_for_dbfield(db_field, request, **kwargs)  # type: ignore[misc]

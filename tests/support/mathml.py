"""What a reader sees of rendered maths: every formula carries its LaTeX source (``alttext`` and
an ``application/x-tex`` annotation), which tests looking for raw TeX on a page must set aside."""

from __future__ import annotations

import re

_ANNOTATION = re.compile(r"<annotation\b[^>]*>.*?</annotation>", re.S)
_ALTTEXT = re.compile(r'\salttext="[^"]*"')


def without_tex_source(html: str) -> str:
    """The HTML with every formula's source (annotation element, alttext attribute) removed."""
    return _ALTTEXT.sub("", _ANNOTATION.sub("", html))

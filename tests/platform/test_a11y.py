"""Small accessibility defects, each pinned: the nav's current page, code colours with AA
contrast in light and dark, scrollable code blocks reachable by the keyboard."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.template import Context, Template

STATIC = Path(__file__).resolve().parents[2] / "platform/static/platform"


def _current(html: str) -> list[str]:
    return re.findall(r'<a href="[^"]*" aria-current="page">([^<]+)</a>', html)


@pytest.mark.django_db
def test_dashboard_lights_dashboard_not_courses(client):
    assert _current(client.get("/courses/dashboard/").content.decode()) == ["Dashboard"]
    assert _current(client.get("/courses/").content.decode()) == ["Courses"]


def _luminance(colour: str) -> float:
    hex_digits = colour.lstrip("#")
    if len(hex_digits) == 3:
        hex_digits = "".join(c * 2 for c in hex_digits)
    channels = [int(hex_digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _code_backgrounds() -> tuple[str, str]:
    css = (STATIC / "site.css").read_text()
    light, dark = re.findall(r"--code-bg: (#[0-9a-fA-F]{6})", css)[:2]
    return light, dark


def test_contrast_formula_matches_wcag_examples():
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0
    assert round(contrast("#767676", "#ffffff"), 2) == 4.54


def test_pygments_colours_meet_wcag_aa_on_the_code_background_light_and_dark():
    light_css, dark_css = (
        (STATIC / "pygments.css").read_text().split("@media (prefers-color-scheme: dark)")
    )
    light_bg, dark_bg = _code_backgrounds()
    checked = 0
    for css, background in ((light_css, light_bg), (dark_css, dark_bg)):
        for token, colour in re.findall(r"\.(\w+) \{ color: (#[0-9A-Fa-f]{3,6})", css):
            assert contrast(colour, background) >= 4.5, (token, colour, background)
            checked += 1
    comments = re.findall(r"\.c1 \{ color: (#[0-9A-Fa-f]{3,6})", light_css + dark_css)
    assert len(comments) == 2 and checked > 100


def test_code_blocks_are_reachable_by_keyboard_and_named():
    html = Template(
        "{% load rendering %}{{ text|markdown }}{% code source 'python' label='Code: a.py' %}"
    ).render(Context({"text": "```python\nx = 1\n```", "source": "print(1)\n"}))
    assert html.count('<pre tabindex="0" role="region" aria-label="Code"') == 1
    assert html.count('<pre tabindex="0" role="region" aria-label="Code: a.py"') == 1
    assert html.count("<pre") == 2


def test_markdown_without_code_has_no_tabindex():
    html = Template("{% load rendering %}{{ text|markdown }}").render(
        Context({"text": "A *preface* and `inline` code."})
    )
    assert "tabindex" not in html

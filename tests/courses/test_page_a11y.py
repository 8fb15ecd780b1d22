"""The chapter page's small accessibility fixes: a titled newsletter box, named code blocks."""

from __future__ import annotations

import re

import pytest

from tests.support.chapters import urls

from .factories import CodeListingFactory

pytestmark = pytest.mark.django_db


def test_chapter_newsletter_box_has_the_seed_heading_and_a_title(client, chapter):
    html = client.get(urls(chapter)["page"]).content.decode()
    box = re.search(r'<section class="chapter-newsletter card"(.*?)</section>', html, re.S)
    assert box is not None
    assert 'aria-labelledby="chapter-newsletter-title"' in box.group(0)
    assert '<h2 id="chapter-newsletter-title">Weekly newsletter</h2>' in box.group(0)
    assert '<p class="newsletter-title">What changed in ML architectures this week</p>' in (
        box.group(0)
    )


def test_chapter_listing_and_its_output_are_keyboard_scrollable(client, chapter):
    CodeListingFactory(chapter=chapter, filename="attend.py")
    html = client.get(urls(chapter)["page"]).content.decode()
    assert '<pre tabindex="0" role="region" aria-label="Code: attend.py" class="highlight">' in html
    assert (
        '<pre class="listing-output" tabindex="0" role="region" aria-label="Output of attend.py">'
        in html
    )

"""The notebook index shows each note's first code block or display equation under its title,
as the seed notebook's index does; a note with neither shows only its why line."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.notebook.factories import NoteFactory

pytestmark = pytest.mark.django_db


def cards(client) -> dict[str, str]:
    html = client.get(reverse("notebook:index")).content.decode()
    found = re.findall(r'<article class="nb-card".*?</article>', html, flags=re.S)
    return {re.search(r'class="nb-card-title"><a [^>]*>([^<]*)</a>', c)[1]: c for c in found}


def test_index_shows_first_code_block_under_the_title(client):
    NoteFactory(
        title="Code first",
        body="Intro.\n\n```python\nrates = [measure() for _ in range(5)]\n```\n\n"
        "$$x^2$$\n\n```python\nsecond = 2\n```\n",
    )
    card = cards(client)["Code first"]
    excerpt = card[card.index('<div class="nb-excerpt">') :]
    assert excerpt.startswith('<div class="nb-excerpt"><pre class="highlight"><code>')
    assert "rates" in excerpt and "measure" in excerpt
    assert "second" not in card and "<math" not in card


def test_index_shows_first_equation_when_it_comes_first(client):
    NoteFactory(title="Maths first", body="See\n\n$$\\log q_i$$\n\n```\ncode()\n```\n")
    card = cards(client)["Maths first"]
    assert '<div class="nb-excerpt"><div class="math block"><math display="block"' in card
    assert 'alttext="\\log q_i"' in card
    assert "code()" not in card


def test_index_note_without_code_or_equation_has_no_excerpt(client):
    NoteFactory(title="Words only", summary="Why with $\\alpha$.", body="Just $x$ inline.")
    card = cards(client)["Words only"]
    assert "nb-excerpt" not in card
    assert (
        '<p class="nb-why"><strong>Why it matters:</strong> Why with <span class="math inline">'
        in (card)
    )

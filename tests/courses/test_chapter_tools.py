"""Each equation on a chapter page leads to the seven questions and to the Decode box."""

from urllib.parse import quote

import pytest

from tests.courses.factories import ChapterFactory, EquationFactory


@pytest.mark.django_db
def test_chapter_equation_links_to_walkthrough_and_explorer(client):
    chapter = ChapterFactory()
    equation = EquationFactory(chapter=chapter, latex=r"y = \frac{x}{\sqrt{d}}")
    body = client.get(chapter.get_absolute_url()).content.decode()
    assert f'href="/widgets/walkthrough/?equation={equation.pk}"' in body
    assert f'href="/widgets/explorer/?latex={quote(equation.latex, safe="/")}"' in body


@pytest.mark.django_db
def test_walkthrough_link_from_chapter_prefills_the_equation(client):
    chapter = ChapterFactory()
    equation = EquationFactory(chapter=chapter, title="Scaled scores")
    response = client.get(f"/widgets/walkthrough/?equation={equation.pk}")
    assert response.status_code == 200
    assert "Scaled scores" in response.content.decode()

from __future__ import annotations

import pytest

from .factories import ChapterFactory, EquationFactory, EquationPartFactory, QuestionFactory


@pytest.fixture
def chapter(db):
    """A published chapter with one equation of two parts and two questions."""
    chapter = ChapterFactory(slug="attention", title="Attention")
    equation = EquationFactory(chapter=chapter, latex="y = W x", widget="")
    EquationPartFactory(equation=equation, order=1, latex="y", role="output", reason="Result.")
    EquationPartFactory(equation=equation, order=2, latex="W", role="learned", reason="Trained.")
    QuestionFactory(chapter=chapter, order=1)
    QuestionFactory(chapter=chapter, order=2)
    return chapter

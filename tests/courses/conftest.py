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


@pytest.fixture
def demo_notes():
    """Stand-ins (made by a factory) for the notebook notes the demo chapters link to, so the
    notebook's own content need not load."""
    from courses import contentfiles
    from tests.notebook.factories import NoteFactory

    slugs = {
        slug
        for course in contentfiles.DEFAULT_DIR.glob(f"*/{contentfiles.COURSE_FILE}")
        for chapter in contentfiles.parse_course(course.parent).chapters
        for slug in chapter.related_notes
    }
    return [NoteFactory(slug=slug, title=slug.replace("-", " ").capitalize()) for slug in slugs]


@pytest.fixture
def demo_course(demo_notes):
    """The glossary and the demo course loaded from courses/content/ (listings not run).
    Returns the loader's summary lines."""
    from courses import contentfiles

    return contentfiles.load(paths=[contentfiles.DEFAULT_DIR]).summaries

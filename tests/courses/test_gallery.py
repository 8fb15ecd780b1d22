"""The staff typesetting gallery: every formula in the content beside its source, staff only."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from courses import contentfiles
from courses.formulas import REGRESSION_CASES, all_formulas
from courses.models import Course
from tests.support.mathml import without_tex_source

from .factories import build_course

URL = "/courses/gallery/"


def test_gallery_url_is_reserved_from_course_slugs():
    assert reverse("courses:gallery") == URL


@pytest.mark.django_db
def test_gallery_is_not_found_for_visitors_and_learners(client, learner):
    assert client.get(URL).status_code == 404
    client.force_login(learner)
    assert client.get(URL).status_code == 404


@pytest.mark.django_db
def test_gallery_shows_every_content_formula_typeset_to_staff(editor_client):
    contentfiles.load_demo()
    distinct = {(f.latex.strip(), f.display) for f in all_formulas()}
    response = editor_client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('<li class="gallery-item"') == len(REGRESSION_CASES) + len(distinct)
    assert html.count("<math ") == len(REGRESSION_CASES) + len(distinct)
    assert "math-error" not in html
    visible = without_tex_source(html)
    # The LaTeX is shown once per entry, in its <code>, and nowhere else outside the maths.
    assert visible.count('<code class="gallery-source">') == len(REGRESSION_CASES) + len(distinct)


@pytest.mark.django_db
def test_gallery_queries_do_not_grow_with_content(editor_client):
    def queries() -> int:
        editor_client.get(URL)
        with CaptureQueriesContext(connection) as ctx:
            assert editor_client.get(URL).status_code == 200
        return len(ctx.captured_queries)

    build_course(1)
    small = queries()
    Course.objects.all().delete()
    build_course(30)
    assert queries() == small

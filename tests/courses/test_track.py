"""The track "Reading ML papers" as shipped: eleven chapters in order, every section of the seed
page in each, listings that pass in the sandbox, every equation decoded, and a new learner who
signs up and passes the whole track answering from the content."""

from __future__ import annotations

import re

import pytest
from allauth.account.models import EmailAddress, EmailConfirmationHMAC
from django.urls import reverse

from courses import services
from courses.models import Chapter, ChapterProgress, CodeListing, Course, Equation, EquationPart
from courses.widgets.explorer import decode, load_symbols
from platform.rendering import render_math
from tests.support.chapters import urls
from tests.support.mathml import without_tex_source

from .factories import right

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
TRACK = [
    ("shapes-and-indices", "Shapes and indices"),
    ("transpose-and-products", "Transpose, matrix products and ⊙"),
    ("softmax-temperature", "Softmax with temperature"),
    ("log-softmax-cross-entropy", "Log-softmax, log-sum-exp and cross-entropy"),
    ("rmsnorm-vs-layernorm", "RMSNorm vs LayerNorm"),
    ("attention-and-masks", "Scaled dot-product attention and masks"),
    ("multi-head-attention", "Multi-head attention"),
    ("rope", "Rotary position embeddings (RoPE)"),
    ("residual-streams", "Residual streams, pre-norm and post-norm"),
    ("adam-and-adamw", "Adam and AdamW"),
    ("capstone-three-equations", "Capstone: read three equations from real papers"),
]
RAW_COMMAND = re.compile(r"\\[A-Za-z]+")


def track_chapters() -> list[Chapter]:
    return list(
        Chapter.objects.filter(course__slug="reading-ml-papers")
        .order_by("order")
        .prefetch_related("equations__parts", "questions__choices", "listings")
    )


def test_course_page_lists_the_eleven_chapters_in_order(client, demo_course):
    course = Course.objects.get(slug="reading-ml-papers")
    html = client.get(course.get_absolute_url()).content.decode()
    titles = re.findall(r'class="chapter-item[^"]*">.*?<a href="[^"]+">([^<]+)</a>', html, re.S)
    assert [t.replace("&amp;", "&") for t in titles] == [title for _slug, title in TRACK]
    assert Chapter.objects.published().filter(course=course).count() == 11
    assert [c.slug for c in track_chapters()] == [slug for slug, _title in TRACK]


def test_every_chapter_has_every_section_of_the_seed_page(client, demo_course):
    for chapter in track_chapters():
        assert chapter.reading_minutes() >= 1, chapter.slug
        assert chapter.summary and chapter.idea and chapter.try_it_intro, chapter.slug
        assert chapter.prerequisites_note, chapter.slug
        assert chapter.chapter_symbols.count() >= 5, chapter.slug
        assert chapter.related_chapters.exists() and chapter.related_notes.exists(), chapter.slug
        assert len(chapter.listings.all()) == 1, chapter.slug
        equations = list(chapter.equations.all())
        assert equations, chapter.slug
        for equation in equations:
            assert equation.shape_note, (chapter.slug, equation.title)
            parts = list(equation.parts.all())
            assert len(parts) >= 2, (chapter.slug, equation.title)
            assert all(p.reason and p.role in EquationPart.Role.values for p in parts)
        questions = list(chapter.questions.all())
        assert len(questions) >= 4, chapter.slug
        for question in questions:
            choices = list(question.choices.all())
            assert len(choices) >= 2, question.prompt
            assert sum(c.is_correct for c in choices) == 1, question.prompt
            assert question.explanation and all(c.explanation for c in choices), question.prompt
        html = client.get(chapter.get_absolute_url()).content.decode()
        for marker in ("min</span>", "Symbols in this lesson", "The idea", "label the parts",
                       "The math", "The code", "You’ll see this in", "Check yourself",
                       "Finished this chapter?", 'class="chapter-newsletter'):  # fmt: skip
            assert marker in html, (chapter.slug, marker)


def test_prerequisites_point_back_and_see_also_points_forward(demo_course):
    order = {c.slug: c.order for c in track_chapters()}
    for chapter in track_chapters()[1:]:
        prerequisites = list(chapter.prerequisites.values_list("slug", flat=True))
        assert prerequisites, chapter.slug
        assert all(order[p] < chapter.order for p in prerequisites), chapter.slug
    for chapter in track_chapters()[:-1]:  # the capstone looks back over the whole track
        later = list(chapter.related_chapters.values_list("slug", flat=True))
        assert all(order[s] > chapter.order for s in later), (chapter.slug, later)


def test_the_ideas_name_the_papers_they_come_from(demo_course):
    ideas = " ".join(c.idea.replace("\n", " ") for c in track_chapters())
    for paper in (
        "Attention Is All You Need",
        "Adam: A Method for Stochastic Optimization",
        "Decoupled Weight Decay Regularization",
        "On Layer Normalization in the Transformer Architecture",
        "Root Mean Square Layer Normalization",
        "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    ):
        assert paper in ideas, paper


def test_every_listing_passes_in_the_sandbox(client, demo_course):
    listings = list(CodeListing.objects.filter(chapter__course__slug="reading-ml-papers"))
    assert len(listings) == 11
    for listing in listings:
        services.check_listing(listing=listing)
        listing.refresh_from_db()
        assert listing.check_status == CodeListing.CheckStatus.PASSED, (
            listing.filename,
            listing.check_detail,
        )
    html = client.get(Chapter.objects.get(slug="adam-and-adamw").get_absolute_url()).content
    assert b'<span class="badge badge-ok">Checked</span>' in html


def test_explorer_decodes_every_equation_and_part_of_the_track(demo_course):
    symbols = load_symbols()
    seen = 0
    for equation in Equation.objects.filter(chapter__course__slug="reading-ml-papers"):
        for latex in [equation.latex, *equation.parts.values_list("latex", flat=True)]:
            decoded = decode(latex, symbols)
            assert decoded.unknown == [], (equation.title, latex, decoded.unknown)
            seen += 1
        assert decode(equation.latex, symbols).symbols, equation.latex
        html = without_tex_source(str(render_math(equation.latex, display=True)))
        assert RAW_COMMAND.search(html) is None, (equation.latex, RAW_COMMAND.findall(html))
    assert seen > 150


def test_explorer_view_decodes_the_new_chapters_equations(client, demo_course):
    new = [
        "log-softmax-cross-entropy",
        "multi-head-attention",
        "residual-streams",
        "adam-and-adamw",
    ]
    for equation in Equation.objects.filter(chapter__slug__in=new):
        response = client.get(reverse("widgets:explorer"), {"latex": equation.latex}, **HTMX)
        assert response.status_code == 200
        assert ", 0 unknown." in response.content.decode(), equation.latex


def _sign_up_and_log_in(client, email: str, password: str) -> None:
    response = client.post(
        reverse("account_signup"), {"email": email, "password1": password, "password2": password}
    )
    assert response.status_code == 302
    key = EmailConfirmationHMAC(EmailAddress.objects.get(email=email)).key
    assert client.post(reverse("account_confirm_email", args=[key])).status_code == 302
    response = client.post(reverse("account_login"), {"login": email, "password": password})
    assert response.status_code == 302


def test_a_new_learner_passes_the_whole_track_answering_from_the_content(
    client, demo_course, password
):
    _sign_up_and_log_in(client, "reader@example.com", password)
    chapters = track_chapters()
    for chapter in chapters:
        for equation in chapter.equations.all():
            parts = list(equation.parts.all())
            label_url = reverse(
                "courses:label", args=[chapter.course.slug, chapter.slug, equation.pk]
            )
            response = client.post(label_url, {f"part-{p.pk}": p.role for p in parts}, **HTMX)
            assert f"{len(parts)} / {len(parts)} parts right." in response.content.decode()
        questions = list(chapter.questions.all())
        data = {f"q{q.pk}": right(q).pk for q in questions}
        response = client.post(urls(chapter)["check"], data, **HTMX)
        html = response.content.decode()
        assert f"{len(questions)} / {len(questions)} done" in html, chapter.slug
        assert "Check passed" in html, chapter.slug
        response = client.post(urls(chapter)["finish"], {"finished": "1"}, **HTMX)
        assert "Marked finished on" in response.content.decode()
    progress = ChapterProgress.objects.filter(user__email="reader@example.com")
    assert progress.filter(check_passed_at__isnull=False, finished_at__isnull=False).count() == 11
    dashboard = client.get(reverse("courses:dashboard")).content.decode()
    assert "11 of 11 passed" in dashboard
    course_page = client.get(chapters[0].course.get_absolute_url()).content.decode()
    assert "11 of 11 chapters passed" in course_page

"""Editors write everything in admin; a question without a correct choice is refused."""

from __future__ import annotations

import pytest
from django.urls import reverse

from courses.models import Chapter, Choice, Question

from .factories import ChapterFactory, QuestionFactory

pytestmark = pytest.mark.django_db


def choice_formset(rows: list[tuple[str, bool]], prefix: str = "choices") -> dict[str, str]:
    data = {
        f"{prefix}-TOTAL_FORMS": str(len(rows)),
        f"{prefix}-INITIAL_FORMS": "0",
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }
    for i, (text, correct) in enumerate(rows):
        data[f"{prefix}-{i}-order"] = str(i)
        data[f"{prefix}-{i}-text"] = text
        data[f"{prefix}-{i}-explanation"] = f"About {text}."
        if correct:
            data[f"{prefix}-{i}-is_correct"] = "on"
    return data


@pytest.mark.parametrize("model", ["course", "chapter", "equation", "question", "symbol"])
def test_admin_pages_open_for_editors(editor_client, model, demo_course):
    assert editor_client.get(reverse(f"admin:courses_{model}_changelist")).status_code == 200
    assert editor_client.get(reverse(f"admin:courses_{model}_add")).status_code == 200
    first = {
        "course": "courses.Course",
        "chapter": "courses.Chapter",
        "equation": "courses.Equation",
        "question": "courses.Question",
        "symbol": "courses.Symbol",
    }[model]
    from django.apps import apps

    obj = apps.get_model(first).objects.first()
    url = reverse(f"admin:courses_{model}_change", args=[obj.pk])
    assert editor_client.get(url).status_code == 200


def test_admin_chapter_search_and_filters(editor_client, demo_course):
    url = reverse("admin:courses_chapter_changelist")
    response = editor_client.get(url, {"q": "RoPE", "published__exact": "1"})
    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == [Chapter.objects.get(slug="rope")]


def test_admin_question_without_correct_choice_is_refused(editor_client):
    chapter = ChapterFactory()
    data = {
        "chapter": chapter.pk,
        "order": "1",
        "prompt": "What is 1 + 1?",
        "explanation": "Counting.",
        **choice_formset([("2", False), ("3", False)]),
    }
    response = editor_client.post(reverse("admin:courses_question_add"), data)
    assert response.status_code == 200
    assert "Mark at least one choice as correct" in response.content.decode()
    assert Question.objects.count() == 0
    data.update(choice_formset([("2", True), ("3", False)]))
    response = editor_client.post(reverse("admin:courses_question_add"), data)
    assert response.status_code == 302
    assert Question.objects.get().choices.filter(is_correct=True).count() == 1


def test_admin_chapter_with_question_lacking_correct_choice_is_refused(editor_client):
    chapter = ChapterFactory(title="Old title")
    question = QuestionFactory(chapter=chapter)
    Choice.objects.filter(question=question).update(is_correct=False)
    response = editor_client.get(reverse("admin:courses_chapter_change", args=[chapter.pk]))
    form = response.context["adminform"].form
    data = {
        name: value
        for name, value in {
            "course": chapter.course.pk,
            "order": chapter.order,
            "published": "on",
            "title": "New title",
            "slug": chapter.slug,
            "summary": chapter.summary,
            "idea": chapter.idea,
            "try_it_intro": chapter.try_it_intro,
            "prerequisites_note": "",
        }.items()
    }
    assert "title" in form.fields
    for formset in response.context["inline_admin_formsets"]:
        management = formset.formset.management_form
        for name, field in management.fields.items():
            data[f"{formset.formset.prefix}-{name}"] = management.initial.get(name, field.initial)
        for i, inline_form in enumerate(formset.formset.forms):
            for name in inline_form.fields:
                value = inline_form.instance.pk if name == "id" else inline_form.initial.get(name)
                if value is not None:
                    data[f"{formset.formset.prefix}-{i}-{name}"] = (
                        value.pk if hasattr(value, "pk") else value
                    )
    url = reverse("admin:courses_chapter_change", args=[chapter.pk])
    response = editor_client.post(url, data)
    assert response.status_code == 200
    assert "These questions have no correct choice" in response.content.decode()
    chapter.refresh_from_db()
    assert chapter.title == "Old title"
    Choice.objects.filter(question=question, text="2").update(is_correct=True)
    response = editor_client.post(url, data)
    assert response.status_code == 302
    chapter.refresh_from_db()
    assert chapter.title == "New title"


def test_admin_changelist_links_preview_of_unpublished_chapter(editor_client, client):
    chapter = ChapterFactory(published=False)
    page = editor_client.get(reverse("admin:courses_chapter_changelist")).content.decode()
    assert f'<a href="{chapter.get_absolute_url()}">preview</a>' in page
    assert editor_client.get(chapter.get_absolute_url()).status_code == 200
    client.logout()
    assert client.get(chapter.get_absolute_url()).status_code == 404


def test_admin_equation_has_the_tutor_answers_inline(editor_client, demo_course):
    from courses.models import Equation

    equation = Equation.objects.get(title="Scaled dot-product attention")
    html = editor_client.get(reverse("admin:courses_equation_change", args=[equation.pk])).content
    html = html.decode()
    assert "Model answers for the tutor (the seven questions)" in html
    assert 'name="answers-TOTAL_FORMS" value="7"' in html
    assert "What shape is everything?" in html  # the question picked by its label

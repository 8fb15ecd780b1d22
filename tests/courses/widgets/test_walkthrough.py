"""The seven questions: prefill from the explorer, saving for signed-in learners, owners only."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.http import urlencode

from courses.contentfiles import DEFAULT_DIR, GLOSSARY_FILE, parse_glossary
from courses.models import EquationAnswer, Symbol, Walkthrough

from ..factories import ChapterFactory, EquationFactory, EquationPartFactory

GLOSSARY = parse_glossary(DEFAULT_DIR / GLOSSARY_FILE)
ATTENTION = (
    r"\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}"
    r"{\sqrt{d_k}}\right)V"
)
KEYS = ["output", "inputs", "learned", "shapes", "operations", "extremes", "ablations"]
URL = reverse("widgets:walkthrough")


@pytest.fixture
def glossary(db):
    Symbol.objects.bulk_create(Symbol(**entry) for entry in GLOSSARY)


@pytest.fixture
def equation(glossary):
    return EquationFactory(
        chapter=ChapterFactory(title="Capstone"),
        title="Scaled dot-product attention",
        latex=ATTENTION,
        shape_note="Q, K: tokens × d_k. V: tokens × d_v.",
    )


def answers(**overrides) -> dict[str, str]:
    return {key: overrides.get(key, f"my answer about {key}") for key in KEYS}


def test_walkthrough_from_pasted_latex_is_prefilled_by_the_explorer(client, glossary):
    response = client.get(URL + "?" + urlencode({"latex": ATTENTION}))
    assert response.status_code == 200
    form = response.context["form"]
    # Readable text to start from, never LaTeX source.
    assert form.initial["output"] == "Attention(Q, K, V): "
    assert form.initial["inputs"] == "Q — Q (queries); K — K (keys); V — V (values)"
    assert "softmax — softmax" in form.initial["operations"]
    assert "√ — square root" in form.initial["operations"]
    assert form.initial["extremes"] == "d_k → ∞ (with and without the divisor): ?"
    assert "Without √ (square root): ?" in form.initial["ablations"]
    assert not any("\\" in str(form.initial[key]) for key in KEYS)
    html = response.content.decode()
    equation_box = (
        'aria-label="The equation (scrolls sideways when wide)"><math display="block" alttext='
    )
    assert equation_box in html
    # The tutor asks one question at a time: the first, with its answer box, and no other box.
    assert "Question 1 of 7:</span> What comes out?" in html
    assert html.count("<textarea") == 1
    assert 'name="output" id="id_output"' in html
    assert '<input type="hidden" name="inputs" value="Q — Q (queries); K' in html
    assert "What the explorer recognised" in html
    assert "Log in</a> to save your answers" in html


def test_walkthrough_from_an_equation_uses_its_shape_note(client, equation):
    response = client.get(URL + f"?equation={equation.pk}")
    assert response.status_code == 200
    assert response.context["form"].initial["shapes"] == "Q, K: tokens × dₖ. V: tokens × dᵥ."
    assert response.context["form"].initial["equation"] == equation.pk
    assert "Scaled dot-product attention" in response.content.decode()


def test_walkthrough_unknown_or_unpublished_equation_is_404(client, glossary):
    hidden = EquationFactory(chapter=ChapterFactory(published=False))
    assert client.get(URL + f"?equation={hidden.pk}").status_code == 404
    assert client.get(URL + "?equation=999999").status_code == 404
    assert client.get(URL + "?equation=abc").status_code == 404


def test_walkthrough_empty_page_offers_a_paste_box(client, glossary):
    response = client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("<textarea") == 1  # one equation input
    assert 'name="latex"' in html and "Start the tutor" in html


def test_walkthrough_oversize_latex_is_400(client, glossary):
    response = client.get(URL + "?" + urlencode({"latex": "x" * 2001}))
    assert response.status_code == 400
    assert "Too long: at most 2,000 characters." in response.content.decode()


def test_walkthrough_learner_saves_and_reopens_answers(learner_client, learner, equation):
    data = {"latex": equation.latex, "equation": equation.pk, **answers()}
    response = learner_client.post(URL, data)
    saved = Walkthrough.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{URL}?walkthrough={saved.pk}"
    assert saved.user == learner and saved.equation == equation and saved.latex == ATTENTION
    assert saved.answers == answers()
    page = learner_client.get(response["Location"])
    assert page.status_code == 200
    assert page.context["form"].initial["learned"] == "my answer about learned"
    assert page["Cache-Control"] == "private, no-cache"
    html = page.content.decode()
    assert "Saved. Your walkthroughs are listed on your dashboard." in html
    assert "Save changes" in html


def test_walkthrough_learner_updates_the_same_walkthrough(learner_client, learner, equation):
    learner_client.post(URL, {"latex": ATTENTION, **answers()})
    saved = Walkthrough.objects.get()
    response = learner_client.post(
        URL, {"latex": ATTENTION, "walkthrough": saved.pk, **answers(output="softmax · V")}
    )
    assert response.status_code == 302
    saved.refresh_from_db()
    assert Walkthrough.objects.count() == 1
    assert saved.answers["output"] == "softmax · V"
    assert saved.equation is None


def test_walkthrough_only_its_owner_may_open_or_update_it(client, learner, outsider, equation):
    saved = Walkthrough.objects.create(user=learner, latex=ATTENTION, answers=answers())
    client.force_login(outsider)
    assert client.get(URL + f"?walkthrough={saved.pk}").status_code == 404
    response = client.post(URL, {"latex": ATTENTION, "walkthrough": saved.pk, **answers()})
    assert response.status_code == 404
    saved.refresh_from_db()
    assert saved.answers == answers()
    client.logout()
    assert client.get(URL + f"?walkthrough={saved.pk}").status_code == 404
    assert client.get(URL + "?walkthrough=nope").status_code == 404


def test_walkthrough_anonymous_can_fill_in_but_is_told_to_log_in(client, glossary):
    response = client.post(URL, {"latex": ATTENTION, **answers()})
    assert response.status_code == 403
    assert Walkthrough.objects.count() == 0
    html = response.content.decode()
    assert "Log in to save." in html
    assert "my answer about extremes" in html  # nothing the learner typed is lost
    assert reverse("account_login") + "?next=" in html


def test_walkthrough_save_is_csrf_protected(learner, equation, password):
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    assert client.post(URL, {"latex": ATTENTION, **answers()}).status_code == 403
    assert Walkthrough.objects.count() == 0
    page = client.get(URL + "?" + urlencode({"latex": ATTENTION}))
    token = page.context["csrf_token"]
    response = client.post(URL, {"latex": ATTENTION, "csrfmiddlewaretoken": token, **answers()})
    assert response.status_code == 302
    assert Walkthrough.objects.count() == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"latex": ""}, "Give the equation: 1 to 2,000 characters"),
        ({"latex": "x" * 2001}, "Too long: at most 2,000 characters."),
        ({"latex": "x", "output": "y" * 4001}, "Keep each answer under 4,000 characters."),
    ],
)
def test_walkthrough_invalid_save_is_400_with_the_field_named(
    learner_client, glossary, data, message
):
    response = learner_client.post(URL, data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert Walkthrough.objects.count() == 0


def test_walkthrough_get_runs_a_constant_number_of_queries(
    learner_client, learner, equation, django_assert_max_num_queries
):
    saved = Walkthrough.objects.create(
        user=learner, equation=equation, latex=ATTENTION, answers=answers()
    )
    # + the equation's parts and model answers (two queries, whatever their number).
    with django_assert_max_num_queries(8):
        assert learner_client.get(URL + f"?walkthrough={saved.pk}").status_code == 200


def test_walkthrough_prefill_runs_a_constant_number_of_queries(
    client, equation, django_assert_max_num_queries
):
    # The prefill reads each recognised symbol's kind and extremes: loaded with the glossary,
    # not one query per symbol.
    with django_assert_max_num_queries(8):
        response = client.get(URL + f"?equation={equation.pk}")
    assert response.status_code == 200
    assert "Q — Q (queries)" in response.content.decode()


# --- the tutor: one question at a time, then the model answer ---------------------------------


def test_tutor_reveals_the_editors_model_answer_after_the_learner_answers(client, equation):
    EquationAnswer.objects.create(
        equation=equation, question="shapes", text="$Q$ is tokens × $d_k$, said the editor."
    )
    data = {"latex": ATTENTION, "equation": equation.pk, "step": 4, **answers()}
    response = client.post(URL, {**data, "action": "reveal"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Question 4 of 7:</span> What shape is everything?" in html
    assert ">my answer about shapes</textarea>" in html  # the learner's answer stays
    model = html[html.index('<div class="model-answer"') :]
    assert "said the editor." in model and "<math" in model  # typeset, not $Q$
    assert "put together from" not in model[: model.index("</div>")]
    assert Walkthrough.objects.count() == 0  # moving through the tutor saves nothing


def test_tutor_next_and_back_move_one_question_keeping_every_answer(client, equation):
    data = {"latex": ATTENTION, "equation": equation.pk, "step": 2, **answers()}
    html = client.post(URL, {**data, "action": "next"}).content.decode()
    assert "Question 3 of 7:</span> What is learned?" in html
    assert "model-answer" not in html  # the model answer waits for the learner
    for key in KEYS:
        assert f"my answer about {key}" in html
    html = client.post(URL, {**data, "action": "back"}).content.decode()
    assert "Question 1 of 7:</span> What comes out?" in html
    html = client.post(URL, {**data, "step": 7, "action": "next"}).content.decode()
    assert "All seven, with the model answers" in html
    assert html.count('class="model-answer"') == 7


def test_tutor_assembles_answers_from_parts_shape_note_and_glossary(client, equation):
    EquationPartFactory(equation=equation, latex="Q", role="input", reason="Queries come in.")
    EquationPartFactory(
        equation=equation,
        latex=r"\operatorname{softmax}",
        role="operation",
        reason="Rows to weights.",
    )
    data = {"latex": ATTENTION, "equation": equation.pk, **answers()}
    inputs = client.post(URL, {**data, "step": 2, "action": "reveal"}).content.decode()
    assert "Queries come in." in inputs and "(put together from the equation" in inputs
    operations = client.post(URL, {**data, "step": 5, "action": "reveal"}).content.decode()
    assert "Rows to weights." in operations
    assert "<strong>square root</strong>" in operations  # from the glossary
    shapes = client.post(URL, {**data, "step": 4, "action": "reveal"}).content.decode()
    assert "Q, K: tokens × d_k. V: tokens × d_v." in shapes  # the shape note


def test_tutor_htmx_step_is_the_tutor_fragment(client, equation):
    data = {"latex": ATTENTION, "equation": equation.pk, "step": 1, "action": "next", **answers()}
    response = client.post(URL, data, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section id="tutor"') and "<html" not in html
    assert "autofocus" in html


def test_tutor_htmx_save_redirects_the_whole_page(learner_client, equation):
    data = {"latex": ATTENTION, "equation": equation.pk, "action": "save", **answers()}
    response = learner_client.post(URL, data, headers={"HX-Request": "true"})
    saved = Walkthrough.objects.get()
    assert response["HX-Redirect"] == f"{URL}?walkthrough={saved.pk}"
    page = learner_client.get(response["HX-Redirect"]).content.decode()
    assert "All seven, with the model answers" in page  # a saved walkthrough opens on all seven


def test_chapter_links_every_equation_to_the_tutor(client, equation):
    equation.chapter.course.published = True
    equation.chapter.course.save()
    equation.chapter.published = True
    equation.chapter.save()
    html = client.get(equation.chapter.get_absolute_url()).content.decode()
    link = f'<a href="{URL}?equation={equation.pk}">Ask the tutor to walk you through it</a>'
    assert link in html

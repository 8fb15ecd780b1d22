"""Errors stay where they happened, under DEBUG as in production.

A 4xx fragment replaces only its own target; a 5xx, a whole error page or a network failure
leaves the page alone and says "Could not reach the server — try again." inside the widget or
form that asked. Before, django-htmx's DEBUG handler replaced the whole chapter with the answer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from courses.models import Chapter

UNREACHABLE = "Could not reach the server — try again."
BAD_REQUEST = "Failed to load resource: the server responded with a status of 400 (Bad Request)"


@pytest.fixture(params=[True, False], ids=["debug", "production"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


@pytest.mark.django_db
def test_base_template_loads_htmx_without_django_htmx_debug_handler(client, settings):
    for debug in (True, False):
        settings.DEBUG = debug
        html = client.get("/").content.decode()
        assert "django_htmx/htmx-2.min.js" in html
        assert "django-htmx.js" not in html  # its handler shows any 4xx/500 as the whole page


@pytest.mark.django_db
def test_htmx_config_swaps_4xx_into_target_and_never_5xx(client):
    html = client.get("/").content.decode()
    raw = re.search(r"<meta name=\"htmx-config\" content='([^']*)'>", html).group(1)
    rules = json.loads(raw)["responseHandling"]
    assert rules == [
        {"code": "204", "swap": False},
        {"code": "[23]..", "swap": True},
        {"code": "4..", "swap": True, "error": False},
        {"code": "5..", "swap": False, "error": True},
        {"code": "...", "swap": False},
    ]
    assert html.count("htmx:beforeSwap") == 0  # no per-page listener left


@pytest.mark.django_db
def test_per_app_htmx_listeners_are_gone(client, demo_course):
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    html = client.get(chapter.get_absolute_url()).content.decode()
    assert "courses/courses.js" not in html
    # The chapter's one script of its own lights equation parts; it has no htmx listener.
    from django.contrib.staticfiles import finders

    assert "htmx" not in Path(finders.find("courses/explorable.js")).read_text()
    assert "newsletter/box.js" not in html
    assert html.count("platform/site.js") == 1


def _watch_400s(page) -> None:
    page.watch.allowed_statuses.add(400)


def _only_expected_console_errors(page, *, allowed: tuple[str, ...]) -> None:
    unexpected = [e for e in page.watch.console_errors if not e.startswith(allowed)]
    assert unexpected == []
    page.watch.console_errors = []
    page.watch.assert_clean()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_bad_input_stays_in_its_widget_and_form(page, debug, demo_course):
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    question = chapter.questions.order_by("order")[1]
    _watch_400s(page)
    page.goto(chapter.get_absolute_url())
    page.evaluate("window.__samePage = true")

    # A wrong-shaped Q matrix, typed: nothing is sent until the typing pauses.
    widget = page.locator("#embed-attention")
    q_box = widget.locator("textarea[name=q]")
    assert q_box.get_attribute("placeholder")
    hint_id = q_box.get_attribute("aria-describedby")
    assert "A row per line" in page.locator(f"#{hint_id}").inner_text()
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "/widgets/attention/" in r.url else None)
    q_box.press_sequentially("1 2 3\n4 5 6", delay=20)
    widget.locator(".widget-errors").wait_for()
    assert len(sent) == 1  # one request after the pause, not one per keystroke
    assert "does not match tokens × d_k" in widget.locator(".widget-errors").inner_text()

    # "Check Q2" with nothing picked: the check section says so, the page stays.
    page.get_by_role("button", name="Check Q2").click()
    page.locator("#check .feedback-bad", has_text="question 2").wait_for()
    assert page.locator(f"#q-{question.pk}").count() == 1

    # A bad address in the chapter's newsletter box.
    page.locator("#nl-chapter-email").fill("a@b")  # the browser lets it through; Django not
    page.locator(".chapter-newsletter").get_by_role("button", name="Subscribe").click()
    page.locator("#nl-chapter-result [data-outcome=invalid]").wait_for()

    assert page.locator("h1").inner_text() == chapter.title
    assert page.evaluate("window.__samePage") is True
    _only_expected_console_errors(page, allowed=(BAD_REQUEST,))


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_server_error_and_network_failure_say_so_inside_the_widget(page, debug, demo_course):
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    page.watch.allowed_statuses.add(502)
    page.goto(chapter.get_absolute_url())
    page.evaluate("window.__samePage = true")
    widget = page.locator("#embed-attention")
    summary = widget.locator(".widget-summary").inner_text()

    # A proxy answers 502 with its own page.
    page.route(
        "**/widgets/attention/**",
        lambda route: route.fulfill(
            status=502, content_type="text/html", body="<!doctype html><h1>Bad gateway</h1>"
        ),
    )
    widget.locator("input[name=tokens]").fill("5")
    error = widget.locator(".request-error")
    error.wait_for()
    assert error.inner_text() == UNREACHABLE
    assert error.get_attribute("role") == "alert"
    assert widget.locator(".widget-summary").inner_text() == summary  # nothing swapped
    # The message sits at the top of the result it could not replace.
    assert widget.locator(".widget-result > .request-error:first-child").count() == 1
    assert "Bad gateway" not in page.content()

    # The network is gone.
    page.unroute("**/widgets/attention/**")
    page.route("**/widgets/attention/**", lambda route: route.abort())
    widget.locator("input[name=tokens]").fill("6")
    page.wait_for_function(
        "() => document.querySelectorAll('#embed-attention .request-error').length === 1"
    )
    assert widget.locator(".request-error").inner_text() == UNREACHABLE

    # Back: the next answer clears the message.
    page.unroute("**/widgets/attention/**")
    widget.locator("input[name=tokens]").fill("3")
    widget.locator(".widget-summary", has_text="3 tokens at").wait_for()
    assert widget.locator(".request-error").count() == 0

    # A form's 5xx lands in that form: finishing the chapter while the server fails.
    page.route("**/finish/", lambda route: route.fulfill(status=500, body="boom"))
    page.get_by_role("button", name="Yes, mark it finished").click()
    finish_error = page.locator("#finish .request-error")
    finish_error.wait_for()
    assert finish_error.inner_text() == UNREACHABLE

    assert page.locator("h1").inner_text() == chapter.title
    assert page.evaluate("window.__samePage") is True
    page.watch.failed_requests = []  # the aborted one, on purpose
    page.watch.bad_responses = []  # the 500 and 502, on purpose
    # Chromium logs the failed loads, htmx logs the 5xx and the send error; all on purpose here.
    _only_expected_console_errors(
        page, allowed=("Failed to load resource", "Response Status Error Code", "htmx:sendError")
    )


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_newsletter_box_shows_the_servers_own_503_message(page, settings, demo_course):
    """A 5xx that carries a message for the reader ([data-reader-message]) shows that message
    instead of the generic one: here the mail server is down."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens: refused
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    page.watch.allowed_statuses.add(503)
    page.goto(chapter.get_absolute_url())
    page.locator("#nl-chapter-email").fill("ada@example.com")
    page.locator(".chapter-newsletter").get_by_role("button", name="Subscribe").click()
    error = page.locator(".chapter-newsletter .request-error")
    error.wait_for()
    assert error.inner_text().startswith("We could not send the confirmation email just now")
    assert page.locator("h1").inner_text() == chapter.title
    _only_expected_console_errors(
        page, allowed=("Failed to load resource", "Response Status Error Code")
    )


@pytest.mark.django_db
def test_htmx_loads_with_the_page_only_where_forms_compute_in_place(client, demo_course):
    chapter = Chapter.objects.get(slug="capstone-three-equations")
    eager = '<script src="/static/django_htmx/htmx-2.min.js" defer></script>'
    lazy = '<meta name="htmx-src" content="/static/django_htmx/htmx-2.min.js">'
    for url in (chapter.get_absolute_url(), "/widgets/attention/"):
        html = client.get(url).content.decode()
        assert eager in html and lazy not in html, url
    for url in ("/", "/courses/", "/notebook/", "/search/?q=softmax", "/review/"):
        html = client.get(url).content.decode()
        assert lazy in html and eager not in html, url


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_footer_box_fetches_htmx_when_reached_and_answers_in_place(page, demo_course):
    """On a page without forms that compute, htmx is not fetched until a reader reaches the
    newsletter box; then the box answers in place, as on a chapter."""
    _watch_400s(page)
    fetched = []
    page.on("request", lambda r: fetched.append(r.url) if "htmx-2" in r.url else None)
    page.goto("/courses/")
    page.wait_for_load_state("load")
    assert fetched == []
    page.locator("#nl-footer-email").focus()
    page.wait_for_function("() => window.htmx !== undefined")
    assert len(fetched) == 1
    page.locator("#nl-footer-email").fill("a@b")
    page.locator(".site-footer").get_by_role("button", name="Subscribe").click()
    page.locator("#nl-footer-result [data-outcome=invalid]").wait_for()
    assert page.url.endswith("/courses/")  # answered in place, no navigation
    _only_expected_console_errors(page, allowed=(BAD_REQUEST,))
    page.watch.assert_clean()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_form_sent_before_htmx_arrives_waits_for_it_and_answers_in_place(page, demo_course):
    """htmx held back for a second: the box is sent at once, waits, and still answers in place."""
    import time

    _watch_400s(page)

    def slow(route):
        time.sleep(1.0)
        route.continue_()

    page.route("**/django_htmx/htmx-2.min*.js", slow)
    page.goto("/courses/")
    page.wait_for_load_state("load")
    page.locator("#nl-footer-email").fill("a@b")
    page.locator("#nl-footer-email").press("Enter")  # long before htmx has arrived
    page.locator("#nl-footer-result [data-outcome=invalid]").wait_for()
    assert page.url.endswith("/courses/")
    _only_expected_console_errors(page, allowed=(BAD_REQUEST,))
    page.watch.assert_clean()

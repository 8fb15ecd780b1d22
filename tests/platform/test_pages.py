"""The base pages: landmarks, navigation, the editors' group and admin branding."""

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from tests.support import ROOT


@pytest.mark.django_db
def test_home_page_has_landmarks_navigation_and_htmx(client):
    response = client.get(reverse("home"))
    body = response.content.decode()
    assert response.status_code == 200
    assert '<a class="skip-link" href="#main">Skip to content</a>' in body
    assert '<main id="main"' in body
    assert 'role="banner"' in body
    assert 'role="contentinfo"' in body
    for label in ("Courses", "Notebook", "Newsletter", "Log in", "Sign up"):
        assert f">{label}</a>" in body
    assert "/static/django_htmx/htmx-2.min.js" in body
    assert 'hx-headers=\'{"X-CSRFToken": "' in body
    assert "<script>" not in body  # no inline script: the CSP would block it


@pytest.mark.django_db
def test_home_page_shows_account_links_when_signed_in(learner_client):
    body = learner_client.get(reverse("home")).content.decode()
    assert ">Account</a>" in body
    assert "Log out" in body
    assert ">Sign up</a>" not in body


@pytest.mark.django_db
def test_unknown_page_is_a_friendly_404(client):
    response = client.get("/no/such/page/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "<title>Not found · From Scratch</title>" in body
    assert "<h1>Nothing here</h1>" in body
    # The site's own page, with its navigation, and a way on from here.
    assert '<a class="skip-link" href="#main">Skip to content</a>' in body
    assert f'<a href="{reverse("courses:index")}">courses</a>' in body
    assert f'<a href="{reverse("notebook:index")}">notebook</a>' in body


@pytest.mark.django_db
def test_editors_group_gets_content_permissions():
    editors = Group.objects.get(name="Editors")
    codenames = set(editors.permissions.values_list("content_type__app_label", flat=True))
    assert "django_celery_beat" in codenames
    assert not editors.permissions.filter(content_type__app_label="auth").exists()
    assert Permission.objects.filter(content_type__app_label="platform").exists()


@pytest.mark.django_db
def test_admin_is_branded_for_editors(editor_client):
    body = editor_client.get(reverse("admin:index")).content.decode()
    assert "From Scratch — editors" in body


def test_site_css_declares_the_local_math_font_and_a_dark_scheme():
    """What the stylesheet says; tests/platform/test_browser.py checks the browser fetches it."""
    css = (ROOT / "platform/static/platform/site.css").read_text()
    assert 'url("fonts/latinmodern-math-core.woff2")' in css
    assert 'url("fonts/latinmodern-math-extended.woff2")' in css
    assert "prefers-color-scheme: dark" in css

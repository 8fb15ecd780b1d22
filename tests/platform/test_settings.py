"""Settings come from the environment and refuse bad values loudly."""

import pytest

from tests.platform.helpers import fetch, production_env, run_manage


@pytest.fixture(scope="module")
def collected_static():
    """Production serves hashed static files: collect them once, as a deploy would."""
    result = run_manage(["collectstatic", "--noinput", "-v0"], production_env())
    assert result.returncode == 0, result.stderr


@pytest.mark.django_db(transaction=True)
def test_check_deploy_with_production_settings_reports_nothing():
    result = run_manage(["check", "--deploy", "--fail-level", "WARNING"], production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"SECRET_KEY": ""}, "SECRET_KEY must be set"),
        ({"SECRET_KEY": "short"}, "SECRET_KEY must be set"),
        ({"ALLOWED_HOSTS": ""}, "ALLOWED_HOSTS must list"),
        ({"DEBUG": "maybe"}, "DEBUG"),
        ({"DATABASE_URL": "mysql://nobody@localhost/x"}, "DATABASE_URL must be"),
        ({"REDIS_URL": "http://localhost:6379"}, "REDIS_URL must start with"),
        ({"SITE_URL": "fromscratch.example"}, "SITE_URL must start with"),
        ({"TRUSTED_PROXY_COUNT": "-1"}, "TRUSTED_PROXY_COUNT must be"),
    ],
)
def test_settings_bad_value_stops_start_up(overrides, message):
    result = run_manage(["check"], production_env(**overrides))
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr or "Error" in result.stderr
    assert message in result.stderr


def test_trusted_proxy_count_is_the_rule_allauth_applies():
    code = "from django.conf import settings; print(settings.ALLAUTH_TRUSTED_PROXY_COUNT)"
    result = run_manage(["shell", "-v", "0", "-c", code], production_env(TRUSTED_PROXY_COUNT="2"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"


@pytest.mark.django_db(transaction=True)
def test_security_headers_on_home_page_in_production(collected_static):
    response = fetch("/", production_env(), secure=True)
    headers = {key.lower(): value for key, value in response["headers"].items()}
    assert response["status"] == 200
    assert headers["strict-transport-security"] == "max-age=31536000; includeSubDomains; preload"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["x-frame-options"] == "DENY"
    csp = headers["content-security-policy"]
    assert "default-src 'self'" in csp
    assert "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp


@pytest.mark.django_db(transaction=True)
def test_production_redirects_plain_http_to_https(collected_static):
    response = fetch("/", production_env(), secure=False)
    assert response["status"] == 301
    assert response["headers"]["Location"] == "https://testserver/"


@pytest.mark.django_db
def test_security_headers_present_in_local_mode(client):
    response = client.get("/")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]

from __future__ import annotations

import os
import time

import pytest
from django.conf import settings as django_settings

from newsletter.models import Issue
from tests.newsletter.smtp import SmtpServer

# Small numbers so that retries, leases and the sweeper act within seconds in tests. The
# visibility timeout must stay ≥ 3 × the chunk time limit (checked at settings import).
FAST = {
    "NEWSLETTER_CHUNK_SIZE": "50",
    "NEWSLETTER_CHUNK_TIME_LIMIT": "5",
    "NEWSLETTER_RETRY_BACKOFF": "1",
    "NEWSLETTER_RETRY_MAX_DELAY": "2",
    "NEWSLETTER_STALE_AFTER": "3",
    "NEWSLETTER_SWEEP_INTERVAL": "2",
    "CELERY_VISIBILITY_TIMEOUT": "15",
}


@pytest.fixture
def smtp_server():
    server = SmtpServer().start()
    yield server
    server.stop()


@pytest.fixture
def smtp_settings(settings, smtp_server):
    """This process sends through the test SMTP server (the worker gets EMAIL_URL)."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = smtp_server.port
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_USE_SSL = False
    return settings


@pytest.fixture
def fast_settings(settings):
    for name, value in FAST.items():
        if name.startswith("NEWSLETTER_"):
            setattr(settings, name, int(value))
    return settings


def worker_env(smtp_server: SmtpServer, **extra: str) -> dict[str, str]:
    return {**FAST, "EMAIL_URL": smtp_server.url, **extra}


def needs_redis() -> None:
    """Skip without REDIS_URL locally; in CI (env CI set) a missing Redis is a failure."""
    if django_settings.REDIS_URL:
        return
    if os.environ.get("CI"):
        pytest.fail("REDIS_URL is not set in CI: the Redis-backed worker tests must run there")
    pytest.skip("needs a real Redis (set REDIS_URL); runs in CI")


def wait_for_status(issue: Issue, statuses: set[str], timeout: float, worker=None) -> Issue:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        issue.refresh_from_db()
        if issue.status in statuses:
            return issue
        time.sleep(0.2)
    log = worker.log() if worker is not None else ""
    raise AssertionError(
        f"issue still {issue.status} after {timeout}s: {issue.delivery_counts()}\n{log}"
    )

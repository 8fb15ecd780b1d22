from __future__ import annotations

import pytest

from tests.newsletter.smtp import SmtpServer
from tests.support.newsletter import FAST


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

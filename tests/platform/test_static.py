"""Static files in development are served by whitenoise too, as in production (finding 13).

Django's runserver has its own static handler; a path such as ``/static/%2e%2e/…`` made it
answer 500. With ``whitenoise.runserver_nostatic`` the development server hands static files to
the same middleware production uses. Checked against a real ``manage.py runserver``.
"""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.support import ROOT
from tests.support.celery_worker import worker_env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(port: int, path: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path)  # sent exactly as written: no normalising of %2e%2e
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


@pytest.fixture(scope="module")
def runserver(tmp_path_factory) -> Iterator[int]:
    tmp_path = tmp_path_factory.mktemp("runserver")
    port = _free_port()
    log = open(tmp_path / "runserver.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=worker_env({"DEBUG": "1"}),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _get(port, "/static/platform/favicon.svg")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp_path / "runserver.log").read_text()) from None
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


@pytest.mark.slow
def test_runserver_serves_static_through_whitenoise(runserver):
    response = _get(runserver, "/static/platform/site.css")
    assert response.status == 200
    assert b"font-family" in response.body
    # whitenoise's mark; Django's own static view sends no such header.
    assert response.getheader("Access-Control-Allow-Origin") == "*"


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [
        "/static/%2e%2e/%2e%2e/platform/settings.py",
        "/static/%2e%2e/%2e%2e/manage.py",
        "/static/../../platform/settings.py",
        "/static/platform/%2e%2e/%2e%2e/%2e%2e/platform/settings.py",
        "/static/%00",
        "/static/platform/nope.css",
    ],
)
def test_runserver_static_traversal_is_404(runserver, path):
    response = _get(runserver, path)
    assert response.status == 404
    assert b"SECRET_KEY" not in response.body

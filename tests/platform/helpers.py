"""Run code under production-like settings in a subprocess (settings are read once per process)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys

from tests.support import ROOT
from tests.support.celery_worker import worker_env

PRODUCTION_ENV = {
    "DEBUG": "0",
    "ALLOWED_HOSTS": "fromscratch.example,testserver",
    "SITE_URL": "https://fromscratch.example",
    "DEFAULT_FROM_EMAIL": "From Scratch <hello@fromscratch.example>",
}


def production_env(**extra: str) -> dict[str, str]:
    env = worker_env({**PRODUCTION_ENV, "SECRET_KEY": secrets.token_urlsafe(60)})
    env.update(extra)
    return env


def run_manage(args: list[str], env: dict[str, str], timeout: float = 120):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def fetch(path: str, env: dict[str, str], secure: bool = True) -> dict:
    """GET a path with Django's test client in a fresh process; returns status, headers, body."""
    code = (
        "import json; from django.test import Client; "
        f"r = Client().get({path!r}, secure={secure!r}); "
        "print(json.dumps({'status': r.status_code, 'headers': dict(r.headers), "
        "'body': r.content.decode()}))"
    )
    result = run_manage(["shell", "-c", code], env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])

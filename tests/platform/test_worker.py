"""A real Celery worker, started as `python -m celery -A platform worker`, runs queued tasks."""

import subprocess
import sys
import uuid

import pytest

from platform.tasks import ping
from tests.support import ROOT


@pytest.mark.worker
def test_worker_runs_task_queued_from_django(shared_worker):
    token = uuid.uuid4().hex
    result = ping.delay(token)
    assert result.get(timeout=60)["token"] == token


def test_bare_celery_console_script_cannot_see_the_package():
    """Why the Makefile says `python -m celery`: the console script imports stdlib platform."""
    celery_script = ROOT / ".venv" / "bin" / "celery"
    if not celery_script.exists():
        pytest.skip("no .venv/bin/celery console script in this environment")
    result = subprocess.run(
        [str(celery_script), "-A", "platform", "inspect", "ping", "--timeout=1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "has no attribute 'celery'" in result.stderr + result.stdout
    module_form = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "platform", "report"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert module_form.returncode == 0, module_form.stderr

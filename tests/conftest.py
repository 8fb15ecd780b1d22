"""Fixtures shared by every app's tests: people, a real Celery worker, a real browser."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group

from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def password() -> str:
    return "correct horse battery staple 42"


@pytest.fixture
def learner(db, password):
    return UserFactory(email="learner@example.com", password=password)


@pytest.fixture
def outsider(db, password):
    return UserFactory(email="outsider@example.com", password=password)


@pytest.fixture
def editor(db, password):
    from platform.editors import EDITORS_GROUP, sync_editor_permissions

    user = UserFactory(email="editor@example.com", password=password, is_staff=True)
    # The data migration creates the group; a transactional test's flush removes it again.
    group, created = Group.objects.get_or_create(name=EDITORS_GROUP)
    if created:
        sync_editor_permissions(sender=None)
    user.groups.add(group)
    return user


@pytest.fixture
def learner_client(client, learner):
    client.force_login(learner)
    return client


@pytest.fixture
def editor_client(client, editor):
    client.force_login(editor)
    return client


# --- a real Celery worker -------------------------------------------------------------------


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a subprocess that must see the test database and broker."""
    from django.db import connection

    env = dict(os.environ)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set for Playwright in this process only
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        host = db.get("HOST") or "127.0.0.1"
        port = db.get("PORT") or 5432
        auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
        env["DATABASE_URL"] = f"postgres://{auth}@{host}:{port}/{db['NAME']}"
    env["VAR_DIR"] = str(settings.VAR_DIR)
    env["PYTHONPATH"] = str(ROOT)
    env["DJANGO_SETTINGS_MODULE"] = "platform.settings"
    env.update(extra or {})
    return env


class Worker:
    """A `python -m celery -A platform worker` subprocess, stopped at teardown."""

    def __init__(self, log_path: Path, env: dict[str, str], args: list[str]) -> None:
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "platform", "worker", "--loglevel=INFO", *args],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited early:\n{self.log()}")
            if b" ready." in self.log_path.read_bytes():
                return
            time.sleep(0.2)
        raise TimeoutError(f"worker not ready after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def kill(self) -> None:
        """SIGKILL the whole process group: the main process and its pool children."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()


@pytest.fixture
def start_worker(transactional_db, tmp_path) -> Iterator:
    """Start real Celery workers: ``start_worker(queues=..., concurrency=..., env={...})``.

    The test database must be committed for the worker to see it, hence transactional_db.
    """
    from django.db import connection

    from platform.celery import app

    connection.close()  # the worker opens its own; SQLite must not see a writer left open
    app.control.purge()  # tasks queued by earlier tests (with no worker) must not run now
    workers: list[Worker] = []

    def start(*, concurrency: int = 1, pool: str = "prefork", env=None, args=()) -> Worker:
        n = len(workers)
        worker = Worker(
            tmp_path / f"worker-{n}.log",
            worker_env(env),
            [f"--concurrency={concurrency}", f"--pool={pool}", f"--hostname=test{n}@%h", *args],
        )
        workers.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in workers:
        worker.stop()


# --- a real browser ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run must install Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs an event loop
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


class PageWatch:
    """Records what a page did wrong: console errors, failed requests, foreign requests."""

    def __init__(self, page, origin: str) -> None:
        self.page = page
        self.origin = origin
        self.console_errors: list[str] = []
        self.failed_requests: list[str] = []
        self.foreign_requests: list[str] = []
        self.bad_responses: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.console_errors.append(f"pageerror: {exc}"))
        page.on("requestfailed", lambda req: self.failed_requests.append(req.url))
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        self.allowed_statuses: set[int] = set()

    def _on_console(self, msg) -> None:
        if msg.type == "error":
            self.console_errors.append(msg.text)

    def _on_request(self, req) -> None:
        if not req.url.startswith((self.origin, "data:", "about:", "blob:")):
            self.foreign_requests.append(req.url)

    def _on_response(self, resp) -> None:
        if resp.status >= 400 and resp.status not in self.allowed_statuses:
            self.bad_responses.append(f"{resp.status} {resp.url}")

    def assert_clean(self) -> None:
        assert self.console_errors == []
        assert self.failed_requests == []
        assert self.foreign_requests == []
        assert self.bad_responses == []


@pytest.fixture
def page(chromium, live_server, request):
    """A fresh browser page on the live server; a screenshot is kept under var/test/screenshots."""
    context = chromium.new_context(
        base_url=live_server.url, viewport={"width": 1200, "height": 900}
    )
    pg = context.new_page()
    pg.set_default_timeout(15000)
    pg.watch = PageWatch(pg, live_server.url)
    yield pg
    out = settings.VAR_DIR / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    try:
        pg.screenshot(path=str(out / f"{request.node.name}.png"), full_page=True)
    finally:
        context.close()


@pytest.fixture
def no_js_page(chromium, live_server, request):
    context = chromium.new_context(base_url=live_server.url, java_script_enabled=False)
    pg = context.new_page()
    pg.set_default_timeout(15000)
    yield pg
    out = settings.VAR_DIR / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(out / f"{request.node.name}.png"), full_page=True)
    context.close()


@pytest.fixture(autouse=True)
def _clear_cache():
    """Rate limits and rendered fragments live in the cache: start every test without them."""
    from django.core.cache import cache

    cache.clear()
    yield


def redis_available() -> bool:
    return bool(settings.REDIS_URL)


def which(name: str) -> str | None:
    return shutil.which(name)

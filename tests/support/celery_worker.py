"""Real Celery workers: ``python -m celery -A platform worker`` subprocesses on the test database.

``start_worker`` starts workers for one test (a test may kill or restart them, or give them its
own environment); ``shared_worker`` is one plain worker for the whole session, for tests that only
need queued tasks to run. Tests using it are run last (see ``pytest_collection_modifyitems``), so
that no other test's tasks reach it while it is up.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from django.conf import settings

from tests.support import ROOT
from tests.support.waiting import wait_until


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


def needs_redis() -> None:
    """Skip without REDIS_URL locally; in CI (env CI set) a missing Redis is a failure."""
    if settings.REDIS_URL:
        return
    if os.environ.get("CI"):
        pytest.fail("REDIS_URL is not set in CI: the Redis-backed worker tests must run there")
    pytest.skip("needs a real Redis (set REDIS_URL); runs in CI")


class Worker:
    """A `python -m celery -A platform worker` subprocess in its own process group."""

    def __init__(self, log_path: Path, env: dict[str, str], args: Sequence[str]) -> None:
        self.log_path = log_path
        self.log_start = 0  # log() shows what was written from here on (the current test's part)
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
        def ready() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited early:\n{self.log()}")
            return b" ready." in self.log_path.read_bytes()

        wait_until(ready, timeout=timeout, interval=0.1, message=self.log)

    def log(self, last: int = 5000) -> str:
        """The last ``last`` characters the worker logged since ``log_start``."""
        with open(self.log_path, "rb") as log:
            log.seek(self.log_start)
            return log.read().decode(errors="replace")[-last:]

    def kill(self) -> None:
        """SIGKILL the whole process group: the main process and its pool children."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """Cold shutdown, without waiting for the idle tail of it.

        Tests stop a worker once they have their answer, so nothing in flight needs draining.
        SIGQUIT (cold shutdown) cancels what is still running (acks_late tasks go back to the
        queue) and stops the pool within about a second; the worker then idles 3–5 s more before
        it exits (the filesystem transport's 2 s drain timeout, billiard's 1 s thread joins), as
        a warm SIGTERM shutdown does. That tail is cut with SIGKILL to the process group.
        """
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGQUIT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(1)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # the main process or a pool child left
        self.proc.wait(10)
        self._log.close()


StartWorker = Callable[..., Worker]


class SupervisedWorker:
    """``python manage.py supervise_worker`` (what ``make run`` starts): a Celery worker with
    embedded beat that the supervisor restarts whenever it exits."""

    STARTED = re.compile(rb"worker started \(pid (\d+)\)")

    def __init__(self, log_path: Path, env: dict[str, str], worker_args: Sequence[str]) -> None:
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "supervise_worker", "--concurrency=2",
             "--min-backoff=0.5", "--stop-timeout=5", "--", *worker_args],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def log(self, last: int = 6000) -> str:
        return self.log_path.read_bytes().decode(errors="replace")[-last:]

    def worker_pids(self) -> list[int]:
        return [int(pid) for pid in self.STARTED.findall(self.log_path.read_bytes())]

    def wait_ready(self, starts: int = 1, timeout: float = 60) -> int:
        """Wait until the ``starts``-th worker said " ready."; returns its pid."""

        def ready() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the supervisor exited:\n{self.log()}")
            return self.log_path.read_bytes().count(b" ready.") >= starts

        wait_until(ready, timeout=timeout, interval=0.1, message=self.log)
        return self.worker_pids()[starts - 1]

    def kill_worker(self) -> int:
        """SIGKILL the current worker's main process (its pool children are left to the
        supervisor); returns its pid."""
        pid = self.worker_pids()[-1]
        os.kill(pid, signal.SIGKILL)
        return pid

    def stop(self) -> int | None:
        """SIGTERM the supervisor (as make's trap does); returns its exit code, or None if it
        had to be killed."""
        code = None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(20)
        else:
            code = self.proc.returncode
        for pid in [self.proc.pid, *self.worker_pids()]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        self.proc.wait(10)
        self._log.close()
        return code


@pytest.fixture
def start_supervised(transactional_db, tmp_path) -> Iterator[Callable[..., SupervisedWorker]]:
    """``start_supervised(env={...}, args=[...])``: a supervised worker (see SupervisedWorker),
    stopped after the test."""
    from django.db import connection

    connection.close()
    _purge_broker()
    started: list[SupervisedWorker] = []

    def start(*, env: dict[str, str] | None = None, args: Sequence[str] = ()) -> SupervisedWorker:
        n = len(started)
        worker = SupervisedWorker(
            tmp_path / f"supervised-{n}.log",
            worker_env(env),
            ["--pool=prefork", f"--hostname=supervised{n}@%h", *args],
        )
        started.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in started:
        worker.stop()


def _purge_broker() -> None:
    """Tasks queued by earlier tests (with no worker) must not run now."""
    from platform.celery import app

    with contextlib.suppress(Exception):  # an unreachable broker is the test's business
        app.control.purge()


@pytest.fixture
def start_worker(transactional_db, tmp_path) -> Iterator[StartWorker]:
    """Start real Celery workers: ``start_worker(concurrency=..., env={...}, args=[...])``.

    The test database must be committed for the worker to see it, hence transactional_db.
    """
    from django.db import connection

    connection.close()  # the worker opens its own; SQLite must not see a writer left open
    _purge_broker()
    workers: list[Worker] = []

    def start(
        *,
        concurrency: int = 1,
        pool: str = "prefork",
        env: dict[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> Worker:
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


@pytest.fixture(scope="session")
def _session_worker(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Worker]:
    with django_db_blocker.unblock():
        env = worker_env()
    worker = Worker(
        tmp_path_factory.mktemp("shared-worker") / "worker.log",
        env,
        ["--concurrency=1", "--pool=prefork", "--hostname=shared@%h"],
    )
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


@pytest.fixture
def shared_worker(transactional_db, _session_worker) -> Worker:
    """A plain worker already running (started once per session): queued tasks run.

    For tests that neither stop, kill nor configure the worker. The test database is committed
    (transactional_db) so the worker sees the test's rows.
    """
    from django.db import connection

    connection.close()
    _purge_broker()
    if _session_worker.proc.poll() is not None:
        pytest.fail(f"the shared worker has exited:\n{_session_worker.log()}")
    _session_worker.log_start = _session_worker.log_path.stat().st_size
    return _session_worker


@pytest.hookimpl(trylast=True)  # after pytest-django's own reordering
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests that use the shared worker last: while it is up, every task queued by any
    test would reach it, so no test that leaves tasks behind may run after it has started."""
    uses = [("shared_worker" in getattr(item, "fixturenames", ()), item) for item in items]
    items[:] = [item for shared, item in uses if not shared] + [
        item for shared, item in uses if shared
    ]

"""A send finishes whatever dies: Redis killed, PostgreSQL crashed, the SMTP server away.

Each test sends a real issue through a supervised worker (``manage.py supervise_worker``, as
``make run`` starts it) to the aiosmtpd server, breaks one part mid-send, and checks that every
confirmed subscriber was served and how many got a second copy. The bound on second copies:

* **in flight**: a message the SMTP server accepted whose row was not yet marked *sent* when
  the fault hit — at most one per pool process (2 here) each time a worker dies or a chunk
  is cut off;
* **lost marks** (PostgreSQL crash only): marks are committed with ``synchronous_commit=off``
  (sending.py, ``_fast_commits``), so a crash of PostgreSQL itself can lose the commits of its
  last ``3 × wal_writer_delay`` = 0.6 s; the test allows every message accepted in the last
  second before the stop.

Redis and PostgreSQL are private servers on free ports (tests/support/private_services.py);
the shared ones are never touched. Figures go to stdout and ``<VAR_DIR>/newsletter-faults.txt``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter

import psycopg
import pytest
from django.conf import settings

from newsletter import tasks
from newsletter.models import Delivery
from tests.newsletter.factories import IssueFactory, confirmed_subscribers
from tests.support import ROOT
from tests.support.celery_worker import worker_env
from tests.support.newsletter import fast_sweeper, sending_env, wait_for_status
from tests.support.private_services import PrivatePostgres, PrivateRedis
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.worker, pytest.mark.slow]

CONCURRENCY = 2  # pool processes of the supervised worker: at most this many in flight


def _report(line: str) -> None:
    print(line)
    with open(settings.VAR_DIR / "newsletter-faults.txt", "a") as out:
        out.write(line + "\n")


def _duplicates(got: Counter) -> int:
    return sum(n - 1 for n in got.values())


def test_supervised_worker_restarts_after_sigkill_and_serves(
    start_supervised, smtp_server, fast_settings
):
    """What make run relies on: SIGKILL the worker, a new one comes (with beat) and works."""
    worker = start_supervised(env=sending_env(smtp_server))
    first = worker.kill_worker()
    second = worker.wait_ready(starts=2, timeout=60)
    assert second != first
    assert "worker exited with signal SIGKILL" in worker.log()
    confirmed = confirmed_subscribers(40)
    issue = IssueFactory(subject="After the restart")
    from newsletter.services import sending

    sending.start_send(issue_id=issue.pk, queue_chunk=tasks.queue_chunk)
    wait_for_status(issue, {"sent", "failed"}, 60, None)
    assert issue.status == "sent"
    assert smtp_server.recorder.recipients() == Counter({s.email: 1 for s in confirmed})
    # One SIGTERM (make's trap, or Ctrl-C) stops the supervisor and its worker.
    assert worker.stop() == 0
    assert "worker stopped" in worker.log()


def test_redis_sigkill_mid_send_serves_everyone(
    start_supervised, smtp_server, fast_settings, tmp_path
):
    redis = PrivateRedis(tmp_path)
    redis.start()
    try:
        total = 1500
        confirmed = confirmed_subscribers(total)
        issue = IssueFactory(subject="Through a Redis kill")
        fast_sweeper()
        rec = smtp_server.recorder
        rec.keep_content = False
        worker = start_supervised(env=sending_env(smtp_server, REDIS_URL=redis.url))
        from platform.celery import app

        started = time.monotonic()
        with app.connection_for_write(redis.url) as conn:
            tasks.send_issue.apply_async((issue.pk,), connection=conn)
        rec.wait_for(300, timeout=60)
        redis.kill()  # SIGKILL: queued and unacknowledged messages are gone with it
        at_kill = rec.count
        time.sleep(2)
        redis.start()  # empty
        wait_for_status(issue, {"sent", "failed"}, 120, None)
        took = time.monotonic() - started
        got = rec.recipients()
        restarts = len(worker.worker_pids()) - 1
        duplicates = _duplicates(got)
        kombu_crash = "has no attribute 'hostname'" in worker.log(10**7)
        _report(
            f"Redis SIGKILL: {total} recipients, killed after {at_kill} accepted; worker "
            f"restarts {restarts} (kombu hostname crash: {kombu_crash}); duplicates "
            f"{duplicates}; missing {len({s.email for s in confirmed} - set(got))}; "
            f"total {took:.1f}s"
        )
        assert issue.status == "sent"
        assert set(got) == {s.email for s in confirmed}
        assert Delivery.objects.filter(issue=issue, status="sent").count() == total
        # At most one message in flight per pool process for each worker that died.
        assert duplicates <= CONCURRENCY * (restarts + 1)
    finally:
        redis.stop()


class _CountHistory:
    """rec.count sampled over time, to tell how many messages were accepted just before t."""

    def __init__(self, rec) -> None:
        self.rec, self.samples = rec, [(time.monotonic(), 0)]

    def wait_for(self, count: int, timeout: float) -> None:
        def reached() -> bool:
            self.samples.append((time.monotonic(), self.rec.count))
            return self.rec.count >= count

        wait_until(reached, timeout=timeout, interval=0.02, message=lambda: f"{self.rec.count}")

    def count_at(self, moment: float) -> int:
        return max((n for t, n in self.samples if t <= moment), default=0)


def _sql(url: str, query: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True) as conn:
        return conn.execute(query, params).fetchall()  # type: ignore[arg-type]  # literal SQL


ISSUE_STATUS = "SELECT status FROM newsletter_issue WHERE id = %s"


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
        capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_postgres_immediate_stop_mid_send_serves_everyone(
    start_supervised, smtp_server, fast_settings
):
    pg = PrivatePostgres()
    try:
        pg.create()
        total = 1500
        env = sending_env(smtp_server, DATABASE_URL=pg.url)
        _manage(worker_env(env), "migrate", "--no-input", "-v0")
        issue_id = int(
            _manage(
                worker_env(env), "shell", "--no-imports", "-c",
                "from django.utils import timezone\n"
                "from newsletter.models import Issue, Subscriber\n"
                "from tests.support.newsletter import fast_sweeper\n"
                "now = timezone.now()\n"
                "Subscriber.objects.bulk_create(Subscriber(email=f'p{i}@example.com', "
                f"status='confirmed', confirmed_at=now) for i in range({total}))\n"
                "fast_sweeper()\n"
                "print(Issue.objects.create(subject='Through a PostgreSQL crash', "
                "body='Hello.').pk)",
            )
        )  # fmt: skip
        rec = smtp_server.recorder
        rec.keep_content = False
        worker = start_supervised(env=env)
        history = _CountHistory(rec)
        started = time.monotonic()
        _manage(
            worker_env(env), "shell", "--no-imports", "-c",
            "from newsletter import tasks\nfrom newsletter.services import sending\n"
            f"sending.start_send(issue_id={issue_id}, queue_chunk=tasks.queue_chunk)",
        )  # fmt: skip
        history.wait_for(400, timeout=60)
        stopped_at = time.monotonic()
        pg.stop_immediate()
        at_stop = rec.count
        last_second = at_stop - history.count_at(stopped_at - 1.0)
        time.sleep(3)
        pg.start()

        def finished() -> bool:
            return _sql(pg.url, ISSUE_STATUS, (issue_id,))[0][0] in ("sent", "failed")

        wait_until(finished, timeout=120, interval=0.5, message=lambda: worker.log())
        took = time.monotonic() - started
        got = rec.recipients()
        duplicates = _duplicates(got)
        restarts = len(worker.worker_pids()) - 1
        counts = dict(
            _sql(pg.url, "SELECT status, count(*) FROM newsletter_delivery GROUP BY status")
        )
        log = worker.log(10**7)
        retries = log.count("database unavailable")
        bound = CONCURRENCY * (restarts + 1) + last_second
        _report(
            f"PostgreSQL -m immediate: {total} recipients, stopped after {at_stop} accepted "
            f"({last_second} in the last second); chunk retries on database errors {retries}; "
            f"worker restarts {restarts}; duplicates {duplicates} (bound {bound}); "
            f"missing {total - len(got)}; total {took:.1f}s"
        )
        assert _sql(pg.url, ISSUE_STATUS, (issue_id,)) == [("sent",)]
        assert counts == {"sent": total}
        assert set(got) == {f"p{i}@example.com" for i in range(total)}
        assert retries >= 1  # chunks retried the lost database instead of failing
        failed_chunks = [
            line
            for line in log.splitlines()
            if "send_chunk[" in line and "raised unexpected" in line
        ]
        assert failed_chunks == []
        assert duplicates <= bound
    finally:
        pg.destroy()


def test_smtp_refusing_connections_mid_send_serves_everyone(
    start_supervised, smtp_server, fast_settings
):
    total = 1500
    confirmed = confirmed_subscribers(total)
    issue = IssueFactory(subject="Through an SMTP outage")
    fast_sweeper()
    rec = smtp_server.recorder
    rec.keep_content = False
    worker = start_supervised(env=sending_env(smtp_server))
    from newsletter.services import sending

    started = time.monotonic()
    sending.start_send(issue_id=issue.pk, queue_chunk=tasks.queue_chunk)
    rec.wait_for(300, timeout=60)
    smtp_server.stop()  # connections refused from now on
    at_stop = rec.count
    try:
        time.sleep(3)
    finally:
        smtp_server.restart()
    wait_for_status(issue, {"sent", "failed"}, 120, None)
    took = time.monotonic() - started
    got = rec.recipients()
    duplicates = _duplicates(got)
    retried = Delivery.objects.filter(issue=issue, attempts__gte=2).count()
    _report(
        f"SMTP refusing for 3 s: {total} recipients, stopped after {at_stop} accepted; "
        f"deliveries that needed more than one try {retried}; duplicates {duplicates}; "
        f"missing {len({s.email for s in confirmed} - set(got))}; total {took:.1f}s; "
        f"worker restarts {len(worker.worker_pids()) - 1}"
    )
    assert issue.status == "sent"
    assert issue.delivery_counts()["sent"] == total
    assert set(got) == {s.email for s in confirmed}
    assert retried >= 1  # the outage was felt and ridden out with retries
    assert duplicates <= CONCURRENCY  # cut off between the server's 250 and the mark

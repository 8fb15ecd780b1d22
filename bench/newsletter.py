"""Benchmark the newsletter send against a bare SMTP loop.

For each list size (default 10,000 and 100,000 confirmed subscribers):

* **worker path**: ``sending.start_send`` (freeze + dispatch) and a real
  ``python -m celery -A platform worker --concurrency=2`` (env BENCH_CONCURRENCY) on Redis
  sending the issue in chunks, into an aiosmtpd sink (a separate process that accepts and
  discards); timed from the start of the send until the issue is *sent*. The worker's peak
  memory (main process + pool children, RSS sampled every 0.2 s) is recorded.
* **bare loop**: the same personalised messages, prepared beforehand, pushed with ``smtplib``
  over one connection to the same sink (10,000 prepared messages, cycled for larger lists).

Run (PostgreSQL + Redis):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/fs_bench_news \\
    REDIS_URL=redis://127.0.0.1:6379/7 .venv/bin/python bench/newsletter.py [10000 100000]

The database is created if missing and migrated; Redis db 7 is flushed (it is the bench's own).
"""

from __future__ import annotations

import asyncio
import os
import signal
import smtplib
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/fs_bench_news"
DEFAULT_REDIS = "redis://127.0.0.1:6379/7"
BARE_PREPARED = 10_000
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "2"))


# --- the sink -----------------------------------------------------------------------------------


def run_sink(port: int, count_file: str) -> None:
    """aiosmtpd that accepts every message and discards it; writes its count to a file."""
    from aiosmtpd.controller import Controller

    class Sink:
        count = 0

        async def handle_DATA(self, server, session, envelope):
            Sink.count += 1
            return "250 OK"

    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    stop = False

    def _stop(*_):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    while not stop:
        Path(count_file).write_text(str(Sink.count))
        time.sleep(0.2)
    Path(count_file).write_text(str(Sink.count))
    controller.stop()


class SinkProcess:
    def __init__(self, workdir: Path) -> None:
        self.port = _free_port()
        self.count_file = workdir / f"sink-{self.port}.count"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "sink", str(self.port), str(self.count_file)], cwd=ROOT
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the SMTP sink did not start")

    def count(self) -> int:
        try:
            return int(self.count_file.read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(10)
        return self.count()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- setup ---------------------------------------------------------------------------------------


def _ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def _setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _reset_list(size: int) -> int:
    """Exactly ``size`` confirmed subscribers, no issue, no delivery (one INSERT … SELECT)."""
    from django.db import connection

    from newsletter.models import Issue, Subscriber

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE newsletter_bounceevent, newsletter_delivery, newsletter_subscriber,"
            " newsletter_issue"
        )
        cursor.execute(
            "INSERT INTO newsletter_subscriber (email, name, status, source, created_at, "
            "updated_at, confirmed_at, soft_bounces, suppressed_reason) "
            "SELECT 'reader' || i || '@example.com', 'Reader ' || i, 'confirmed', 'bench', "
            "now(), now(), now(), 0, '' FROM generate_series(1, %s) AS i",
            [size],
        )
    from newsletter.demo import CONTENT_DIR
    from platform.frontmatter import read_markdown

    _meta, body = read_markdown(CONTENT_DIR / "first-letter.md")
    issue = Issue.objects.create(subject="Bench: attention, slowly", body=body)
    assert Subscriber.objects.confirmed().count() == size
    return issue.pk


# --- the two contenders --------------------------------------------------------------------------


def _tree_rss_kib(pid: int) -> int:
    """RSS of a process and its children, from /proc."""
    total = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except FileNotFoundError:
        return 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def run_worker_path(issue_id: int, size: int, sink: SinkProcess, env: dict[str, str]) -> dict:
    from newsletter import tasks
    from newsletter.models import Issue
    from newsletter.services import sending

    log = open(ROOT / "var" / "bench-newsletter" / "worker.log", "wb")  # noqa: SIM115
    worker_env = {
        **os.environ,
        **env,
        "EMAIL_URL": f"smtp://127.0.0.1:{sink.port}",
        "PYTHONPATH": str(ROOT),
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "platform", "worker", f"--concurrency={CONCURRENCY}",
         "--loglevel=WARNING", "--hostname=bench@%h"],
        cwd=ROOT, env=worker_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        time.sleep(6)  # let the pool start before the clock does
        idle_rss = _tree_rss_kib(worker.pid)
        before = sink.count()
        started = time.perf_counter()
        sending.start_send(issue_id=issue_id, queue_chunk=tasks.queue_chunk)
        peak = idle_rss
        issue = Issue.objects.get(pk=issue_id)
        while True:
            peak = max(peak, _tree_rss_kib(worker.pid))
            issue.refresh_from_db(fields=["status"])
            if issue.status in ("sent", "failed"):
                break
            if worker.poll() is not None:
                raise RuntimeError("the worker died; see var/bench-newsletter/worker.log")
            time.sleep(0.2)
        seconds = time.perf_counter() - started
        time.sleep(0.5)
        counts = issue.delivery_counts()
        return {
            "seconds": seconds,
            "rate": size / seconds,
            "received": sink.count() - before,
            "counts": counts,
            "idle_rss_mib": idle_rss / 1024,
            "peak_rss_mib": peak / 1024,
        }
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(30)
        log.close()


def run_bare_loop(issue_id: int, size: int, sink: SinkProcess) -> dict:
    """The same messages, prepared first, pushed over one SMTP connection."""
    from django.conf import settings

    from newsletter.emails import IssueMail
    from newsletter.models import Issue, Subscriber

    issue = Issue.objects.get(pk=issue_id)
    mail = IssueMail(issue)
    # The bytes the worker sends (equation pictures included), prepared before the clock runs.
    prepared = [
        (s.email, mail.raw(s))
        for s in Subscriber.objects.order_by("id")[: min(size, BARE_PREPARED)]
    ]
    before = sink.count()
    started = time.perf_counter()
    with smtplib.SMTP("127.0.0.1", sink.port) as smtp:
        for i in range(size):
            to, data = prepared[i % len(prepared)]
            smtp.sendmail(settings.NEWSLETTER_FROM_EMAIL, [to], data)
    seconds = time.perf_counter() - started
    time.sleep(0.5)
    return {"seconds": seconds, "rate": size / seconds, "received": sink.count() - before}


def main(sizes: list[int]) -> None:
    env = {
        "DATABASE_URL": os.environ.get("DATABASE_URL", DEFAULT_DB),
        "REDIS_URL": os.environ.get("REDIS_URL", DEFAULT_REDIS),
        "VAR_DIR": str(ROOT / "var" / "bench-newsletter"),
        "DJANGO_SETTINGS_MODULE": "platform.settings",
        "LOG_LEVEL": "WARNING",
    }
    if not env["DATABASE_URL"].startswith("postgres"):
        sys.exit("use PostgreSQL: DATABASE_URL=postgres://…")
    Path(env["VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    _ensure_database(env["DATABASE_URL"])
    _setup_django(env)
    import redis

    redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    from django.conf import settings

    print(
        f"chunk size {settings.NEWSLETTER_CHUNK_SIZE}, worker concurrency {CONCURRENCY}, "
        f"{os.cpu_count()} CPUs, PostgreSQL + Redis, aiosmtpd sink in its own process"
    )
    rows = []
    for size in sizes:
        sink = SinkProcess(Path(env["VAR_DIR"]))
        try:
            issue_id = _reset_list(size)
            bare = run_bare_loop(issue_id, size, sink)
            worker = run_worker_path(issue_id, size, sink, env)
        finally:
            sink.stop()
        rows.append((size, bare, worker))
        print(
            f"{size:>7} subscribers: bare loop {bare['rate']:7.0f} msg/s ({bare['seconds']:.1f} s)"
            f" | worker path {worker['rate']:7.0f} msg/s ({worker['seconds']:.1f} s, "
            f"{worker['received']} received, {worker['counts']['sent']} marked sent) "
            f"= {worker['rate'] / bare['rate']:.2f}× | worker RSS idle "
            f"{worker['idle_rss_mib']:.0f} MiB, peak {worker['peak_rss_mib']:.0f} MiB",
            flush=True,
        )
        assert worker["received"] == size, worker
        assert worker["counts"]["sent"] == size, worker


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "sink":
        asyncio.set_event_loop(asyncio.new_event_loop())
        run_sink(int(sys.argv[2]), sys.argv[3])
    else:
        main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])

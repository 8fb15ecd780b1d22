"""A small load generator and server helpers shared by the benchmarks.

``run_load`` drives one or more URL paths with N threads, each holding one keep-alive
``http.client`` connection, for a fixed time, and reports requests per second. ``Gunicorn`` starts
``python -m gunicorn platform.wsgi`` (or another WSGI app) on loopback (from the repository root,
so that the project's ``platform`` package is the one imported) and stops it by its own process
group.
"""

from __future__ import annotations

import http.client
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class LoadResult:
    requests: int
    seconds: float
    statuses: Counter = field(default_factory=Counter)
    errors: int = 0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def run_load(
    port: int,
    paths: Sequence[str],
    *,
    seconds: float = 2.0,
    threads: int = 4,
    headers: dict[str, str] | None = None,
    host: str = "127.0.0.1",
) -> LoadResult:
    """GET ``paths`` round-robin from ``threads`` keep-alive connections for ``seconds``."""
    stop = time.perf_counter() + seconds
    lock = threading.Lock()
    total = LoadResult(0, seconds)
    hdrs = {"Connection": "keep-alive", **(headers or {})}

    def worker(offset: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=30)
        done, statuses, errors, i = 0, Counter(), 0, offset
        while time.perf_counter() < stop:
            path = paths[i % len(paths)]
            i += 1
            try:
                conn.request("GET", path, headers=hdrs)
                response = conn.getresponse()
                response.read()
                statuses[response.status] += 1
                done += 1
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = http.client.HTTPConnection(host, port, timeout=30)
            except (OSError, http.client.HTTPException):
                errors += 1
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=30)
        conn.close()
        with lock:
            total.requests += done
            total.statuses.update(statuses)
            total.errors += errors

    started = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    total.seconds = time.perf_counter() - started
    return total


def summary(values: Sequence[float]) -> str:
    """Median with min–max spread: ``123.4 (118.0–130.2)``."""
    return f"{statistics.median(values):.1f} ({min(values):.1f}–{max(values):.1f})"


class Gunicorn:
    """``python -m gunicorn <app>`` on 127.0.0.1:port; use as a context manager."""

    def __init__(
        self,
        port: int,
        *,
        env: dict[str, str] | None = None,
        workers: int = 2,
        threads: int = 4,
        log: Path | None = None,
        app: str = "platform.wsgi",
    ) -> None:
        self.port = port
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.args = [
            sys.executable, "-m", "gunicorn", app,
            "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
            "--worker-class", "gthread", "--threads", str(threads),
            "--keep-alive", "30", "--log-level", "warning",
        ]  # fmt: skip
        self.log_path = log or ROOT / "var" / f"bench-gunicorn-{port}.log"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Gunicorn:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            self.args, cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{self.log_path.read_text()[-3000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/healthz")
                conn.getresponse().read()
                conn.close()
                return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"gunicorn on port {self.port} not ready after {timeout}s")

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()

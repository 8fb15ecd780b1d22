"""Keep one Celery worker running: restart it when it exits, with backoff; stop it on a signal.

``make run`` starts the worker through ``python manage.py supervise_worker`` so that a worker
that dies (SIGKILL, the out-of-memory killer, kombu's "Unrecoverable error" when Redis
vanishes) comes back — with its embedded beat, and so the sweeper — instead of leaving the site
without one. In production systemd does the same job (deploy/fromscratch-worker.service,
``Restart=always``).

The worker runs in its own session (process group): a Ctrl-C in the terminal reaches the
supervisor only, which forwards one SIGTERM (Celery's warm shutdown) to the worker, then, if it
is still running after ``stop_timeout`` seconds or another signal comes later, SIGQUIT and
finally SIGKILL to the whole group, and exits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

log = logging.getLogger("platform.supervise")


@dataclass
class Supervisor:
    command: Sequence[str]
    min_backoff: float = 1.0
    max_backoff: float = 30.0
    healthy_after: float = 60.0  # a run at least this long resets the backoff
    stop_timeout: float = 20.0
    restarts: int = 0
    _proc: subprocess.Popen | None = None
    _stop_requested_at: float | None = None
    _escalation: list[int] = field(
        default_factory=lambda: [signal.SIGTERM, signal.SIGQUIT, signal.SIGKILL]
    )

    def run(self) -> int:
        previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            return self._loop()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _loop(self) -> int:
        backoff = self.min_backoff
        while self._stop_requested_at is None:
            started = time.monotonic()
            self._proc = subprocess.Popen(self.command, start_new_session=True)
            log.info("worker started (pid %s)", self._proc.pid)
            code = self._wait()
            self._kill_leftovers()
            if self._stop_requested_at is not None:
                log.info("worker stopped (exit code %s)", code)
                return 0
            ran = time.monotonic() - started
            if ran >= self.healthy_after:
                backoff = self.min_backoff
            self.restarts += 1
            log.error(
                "worker exited with %s after %.1f s; restart %s in %.1f s",
                _describe(code),
                ran,
                self.restarts,
                backoff,
            )
            deadline = time.monotonic() + backoff
            while self._stop_requested_at is None and time.monotonic() < deadline:
                time.sleep(0.05)
            backoff = min(backoff * 2, self.max_backoff)
        return 0

    def _wait(self) -> int:
        assert self._proc is not None
        while True:
            try:
                return self._proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
            asked = self._stop_requested_at
            if asked is not None and time.monotonic() - asked > self.stop_timeout:
                self._escalate("the worker did not stop in time")
                self._stop_requested_at = time.monotonic()

    def _on_signal(self, signum: int, frame) -> None:
        now = time.monotonic()
        first = self._stop_requested_at is None
        # make's trap sends SIGTERM right after the terminal's SIGINT: one Ctrl-C, one request.
        if first or now - self._stop_requested_at > 2:  # type: ignore[operator]
            self._stop_requested_at = now
            self._escalate(f"{signal.Signals(signum).name} received")

    def _escalate(self, why: str) -> None:
        sig = self._escalation.pop(0) if len(self._escalation) > 1 else self._escalation[0]
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        log.info("%s: sending %s to the worker", why, signal.Signals(sig).name)
        with contextlib.suppress(ProcessLookupError):
            if sig == signal.SIGKILL:
                os.killpg(proc.pid, sig)
            else:
                os.kill(proc.pid, sig)

    def _kill_leftovers(self) -> None:
        """Pool processes of a worker whose main process was killed must not linger."""
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)


def _describe(code: int) -> str:
    if code < 0:
        return f"signal {signal.Signals(-code).name}"
    return f"code {code}"


def celery_worker_command(args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "platform", "worker", *args]

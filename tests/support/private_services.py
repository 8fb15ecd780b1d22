"""Private Redis and PostgreSQL servers for fault tests, which kill them.

The shared services (PostgreSQL on 5432, Redis on 6379) serve every test and every developer
on the machine: a test that kills or stops a server starts its own on a free port, here, and
kills that one. Without the binaries the test is skipped, with the reason; in CI (env CI set)
a missing binary is a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.newsletter.smtp import free_port
from tests.support.waiting import wait_until


def _missing(what: str, install: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is not installed in CI: {install}")
    pytest.skip(f"{what} not installed ({install})")


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


class PrivateRedis:
    """A redis-server of our own on a free port, with no persistence: a restart empties it."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            _missing("redis-server", "apt-get install redis-server")
        self.binary, self.workdir, self.port = str(binary), workdir, free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until(lambda: _answers(self.port), timeout=10, interval=0.05,
                   message="redis-server did not start")  # fmt: skip

    def kill(self) -> None:
        """SIGKILL: no shutdown, connections die mid-command."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class PrivatePostgres:
    """A PostgreSQL cluster of our own (initdb in a temporary folder, a free port, trust auth).

    PostgreSQL refuses to run as root: as root the cluster belongs to the ``postgres`` user and
    its programs run through ``runuser``.
    """

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            _missing("PostgreSQL's initdb", "apt-get install postgresql")
        self.bin = Path(found[-1]).parent
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="fromscratch-pg-"))
        self.data = self.root / "data"
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                pytest.skip("running as root without runuser: cannot start PostgreSQL")
            self.as_user = [runuser, "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres", "postgres")
        self.root.chmod(0o755)

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/fromscratch"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self.as_user, *args], check=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, cwd=self.root,
        )  # fmt: skip

    def create(self) -> None:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                  "-A", "trust", "--no-sync", "-E", "UTF8")  # fmt: skip
        self.start()
        self._run(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
                  "-U", "postgres", "fromscratch")  # fmt: skip

    def start(self) -> None:
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-w",
            "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 "
                  f"-c unix_socket_directories={self.root}", "start",
        )  # fmt: skip

    def stop_immediate(self) -> None:
        """`pg_ctl stop -m immediate`: every backend quits at once, no checkpoint; the next
        start replays the WAL (what a crash does)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")

    def destroy(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                [*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m",
                 "immediate", "stop"],
                check=False, capture_output=True,
            )  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)

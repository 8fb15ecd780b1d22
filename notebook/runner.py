"""Run one snippet in a contained child process and judge its output.

No Django here: :func:`run_snippet` takes the code and the limits and returns a
:class:`RunResult`. The child is the project's own interpreter (``sys.executable -I``) reading the
code from stdin, with

* a wall-clock limit (the whole process group is SIGKILLed when it passes) and RLIMIT_CPU;
* RLIMIT_AS (memory), RLIMIT_FSIZE (file size), RLIMIT_NOFILE, no core dumps;
* a cap on what it may print (it is killed past ``max_output_bytes``);
* a minimal environment (PATH, HOME, LANG, one BLAS thread) and an empty working directory.

When the parent runs as root (the worker does on this machine) the child also gets, set up in
``preexec_fn`` before ``exec``:

* a new network namespace (only a loopback that is down: no route anywhere);
* a new mount namespace with fresh, size-limited tmpfs on /tmp, /var/tmp and /dev/shm; the
  working directory is an empty folder on that tmpfs, so nothing written there outlives the run;
* its own throw-away user id with no groups, so the rest of the file system is read-only to it
  and RLIMIT_NPROC caps its processes (fork bombs hit the cap); after the run every process of
  that user id is killed with ``kill(-1, SIGKILL)`` from a helper running as that user, which
  also reaps children that left the process group.

Whatever could not be set up is recorded in ``RunResult.detail`` (and ``network_isolated``), never
silently skipped. Without root the run still has the limits above and tries an unprivileged user
plus network namespace for isolation.
"""

from __future__ import annotations

import contextlib
import ctypes
import difflib
import importlib.util
import os
import random
import resource
import selectors
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
TIMED_OUT = "timed_out"
NOT_RUN = "not_run"

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_NOSUID = 2
MS_NODEV = 4
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

SANDBOX_UID_BASE = 0x7A000000  # far above any real account; one fresh id per run
MAX_PROCESSES = 32  # RLIMIT_NPROC for the sandbox user (threads count too)

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class RunResult:
    status: str  # "" until _judge compares the output
    output: str = ""
    stderr: str = ""
    diff: str = ""
    detail: str = ""
    exit_code: int | None = None
    duration: float = 0.0
    network_isolated: bool | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def combined_output(self) -> str:
        if not self.stderr:
            return self.output
        return f"{self.output}\n--- stderr ---\n{self.stderr}" if self.output else self.stderr


def normalise(text: str) -> str:
    """Unify newlines, drop trailing whitespace on every line and trailing blank lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).rstrip("\n")


def output_diff(expected: str, actual: str) -> str:
    return "\n".join(
        difflib.unified_diff(
            normalise(expected).split("\n"),
            normalise(actual).split("\n"),
            fromfile="expected",
            tofile="actual",
            lineterm="",
        )
    )


def missing_packages(packages: list[str]) -> list[str]:
    missing = []
    for name in packages:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    _check(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _first_closed_ancestor(path: Path) -> Path | None:
    """The highest ancestor of ``path`` that other users cannot traverse (e.g. /root, 0700)."""
    for parent in reversed(path.parents):
        if parent == Path("/"):
            continue
        try:
            mode = parent.stat().st_mode
        except OSError:
            return None
        if not mode & stat.S_IXOTH:
            return parent
    return None


_PRIVATE_TMP = ("/tmp", "/var/tmp", "/dev/shm")  # noqa: S108 - replaced by private tmpfs


class _Sandbox:
    """What the child does between fork and exec, and the clean-up after it."""

    def __init__(self, *, memory_bytes: int, cpu_seconds: int, file_bytes: int, stage: Path):
        self.memory_bytes = memory_bytes
        self.cpu_seconds = cpu_seconds
        self.file_bytes = file_bytes
        self.stage = stage
        self.as_root = os.geteuid() == 0
        self.uid = SANDBOX_UID_BASE + random.randrange(1, 1 << 20) if self.as_root else None  # noqa: S311
        self.prefix = Path(sys.base_prefix).resolve()
        self.hidden = _first_closed_ancestor(self.prefix) if self.as_root else None
        self.report_r, self.report_w = os.pipe()
        if not self.as_root:
            self.nproc = self._own_process_count() + MAX_PROCESSES

    @staticmethod
    def _own_process_count() -> int:
        uid = os.getuid()
        count = 0
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    if entry.stat().st_uid == uid:
                        count += len(os.listdir(f"/proc/{entry.name}/task"))
                except OSError:
                    continue
        return count

    def workdir(self) -> str:
        return "/tmp/work" if self.as_root else ""  # noqa: S108 - on the child's private tmpfs

    # --- in the child, after fork, before exec ---------------------------------------------
    def preexec(self) -> None:
        facts: list[str] = []
        try:
            if self.as_root:
                self._root_setup(facts)
            else:
                self._user_setup(facts)
            self._limits(facts)
            if self.as_root:
                assert self.uid is not None  # as_root always draws a uid
                os.setgroups([])
                os.setgid(self.uid)
                os.setuid(self.uid)
                os.chdir(self.workdir())
                facts.append("user=sandbox")
        except BaseException as exc:  # report, then refuse to run half-contained
            os.write(self.report_w, f"fatal={exc}\n".encode())
            os._exit(125)
        os.write(self.report_w, ("\n".join(facts) + "\n").encode())
        os.close(self.report_w)

    def _root_setup(self, facts: list[str]) -> None:
        try:
            _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
            facts.append("net=isolated")
        except OSError as exc:
            facts.append(f"net=open ({exc})")
        _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
        if self.hidden is not None:
            # The interpreter lives under a folder other users cannot enter (/root is 0700):
            # cover that folder with an empty tmpfs and bind only the interpreter back into it.
            _mount(str(self.prefix), str(self.stage), None, MS_BIND | MS_REC, None)
            _mount("tmpfs", str(self.hidden), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
            os.makedirs(self.prefix, exist_ok=True)
            _mount(str(self.stage), str(self.prefix), None, MS_BIND | MS_REC, None)
            _libc.umount2(str(self.stage).encode(), MNT_DETACH)
        # The virtual environment (and so the interpreter's packages) may itself live under
        # /tmp — a CI checkout often does. Hold it by a descriptor, cover the temporary folders,
        # then bind it back at the same path (read-only to the sandbox user, who owns nothing).
        venv = Path(sys.prefix).resolve()
        covered = [
            Path(top) for top in _PRIVATE_TMP if top == str(venv) or Path(top) in venv.parents
        ]
        held = os.open(venv, os.O_PATH | os.O_DIRECTORY) if covered else None
        flags = MS_NOSUID | MS_NODEV
        _mount("tmpfs", "/tmp", "tmpfs", flags, "size=64m,mode=1777")  # noqa: S108
        for extra in _PRIVATE_TMP[1:]:
            if os.path.isdir(extra):
                _mount("tmpfs", extra, "tmpfs", flags, "size=16m,mode=1777")
        if held is not None:
            os.makedirs(venv, exist_ok=True)
            _mount(f"/proc/self/fd/{held}", str(venv), None, MS_BIND | MS_REC, None)
            os.close(held)
        os.mkdir(self.workdir(), 0o700)
        assert self.uid is not None  # as_root always draws a uid
        os.chown(self.workdir(), self.uid, self.uid)
        facts.append("fs=private")

    def _user_setup(self, facts: list[str]) -> None:
        try:
            _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNET), "unshare(CLONE_NEWUSER|NEWNET)")
            facts.append("net=isolated")
        except OSError as exc:
            facts.append(f"net=open ({exc})")
        facts.append("user=same (not root: no separate user id, no private /tmp)")

    def _limits(self, facts: list[str]) -> None:
        nproc = MAX_PROCESSES if self.as_root else self.nproc
        for limit, value in (
            (resource.RLIMIT_AS, self.memory_bytes),
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_FSIZE, self.file_bytes),
            (resource.RLIMIT_NOFILE, 256),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NPROC, nproc),
        ):
            resource.setrlimit(limit, (value, value))

    # --- in the parent ------------------------------------------------------------------------
    def count_processes(self) -> int:
        if self.uid is None:
            return 0
        count = 0
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    status = Path(f"/proc/{entry.name}/status").read_text()
                except OSError:
                    continue
                if f"\nUid:\t{self.uid}\t" in status and "\nState:\tZ" not in status:
                    count += 1
        return count

    def read_report(self) -> list[str]:
        os.close(self.report_w)
        chunks = []
        while chunk := os.read(self.report_r, 4096):
            chunks.append(chunk)
        os.close(self.report_r)
        return b"".join(chunks).decode(errors="replace").split("\n")

    def kill_everything(self, proc: subprocess.Popen) -> None:
        """SIGKILL the process group, then every process of the sandbox user, then reap."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if self.uid is not None:
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the helper child
                try:
                    os.setgroups([])
                    os.setgid(self.uid)
                    os.setuid(self.uid)
                    for _ in range(5):
                        os.kill(-1, signal.SIGKILL)  # every process of this uid but ourselves
                        time.sleep(0.01)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)


def run_snippet(
    code: str,
    *,
    expected_output: str = "",
    packages: list[str] | tuple[str, ...] = (),
    time_limit: float = 10.0,
    memory_limit_mb: int = 512,
    max_output_bytes: int = 64_000,
    python: str = sys.executable,
) -> RunResult:
    """Run ``code`` contained, compare its stdout with ``expected_output``.

    Side effects: starts (and always kills) a child process; creates and removes a temporary
    folder. Never raises for anything the snippet does.
    """
    missing = missing_packages(list(packages))
    if missing:
        return RunResult(
            status=NOT_RUN,
            detail="Not run: needs " + ", ".join(missing) + ", not installed on this server.",
        )

    with tempfile.TemporaryDirectory(prefix="snippet-") as tmp:
        root = Path(tmp)
        (root / "stage").mkdir()
        (root / "work").mkdir()
        sandbox = _Sandbox(
            memory_bytes=memory_limit_mb * 1024 * 1024,
            cpu_seconds=int(time_limit) + 2,
            file_bytes=16 * 1024 * 1024,
            stage=root / "stage",
        )
        workdir = sandbox.workdir() or str(root / "work")
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": workdir,
            "TMPDIR": workdir,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "NUMEXPR_NUM_THREADS": "1",
        }
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                [python, "-I", "-u", "-"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=None if sandbox.as_root else workdir,
                env=env,
                start_new_session=True,
                preexec_fn=sandbox.preexec,
                pass_fds=(sandbox.report_w,),
                close_fds=True,
            )
        except OSError as exc:  # the interpreter could not start: say so, never crash the caller
            sandbox.read_report()  # closes both ends of the report pipe
            return RunResult(status=ERROR, detail=f"The sandboxed interpreter did not start: {exc}")
        report = sandbox.read_report()
        try:
            result = _communicate(proc, code, time_limit, max_output_bytes, sandbox)
        finally:
            sandbox.kill_everything(proc)
            proc.wait()
        result.duration = round(time.monotonic() - started, 3)

    result.network_isolated = "net=isolated" in report
    contained = [line for line in report if line.startswith(("net=open", "user=same", "fatal="))]
    if contained:
        result.notes.extend(contained)
    if any(line.startswith("fatal=") for line in report):
        result.status = ERROR
        result.detail = "The sandbox could not be set up: " + "; ".join(contained)
        return result
    if not result.status:
        killed = result.detail
        result = _judge(result, expected_output, memory_limit_mb)
        if killed:
            result.detail = f"{result.detail} {killed}"
    if result.notes:
        result.detail = (result.detail + " " if result.detail else "") + (
            "Containment: " + "; ".join(result.notes)
        )
    return result


def _communicate(
    proc: subprocess.Popen, code: str, time_limit: float, cap: int, sandbox: _Sandbox
) -> RunResult:
    assert proc.stdin is not None  # started with stdin, stdout and stderr pipes
    try:
        proc.stdin.write(code.encode())
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    out, err = bytearray(), bytearray()
    buffers: dict[Any, bytearray] = {proc.stdout: out, proc.stderr: err}
    selector = selectors.DefaultSelector()
    for stream in buffers:
        selector.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + time_limit
    status, detail = None, ""
    exited_at = None
    while selector.get_map():
        remaining = deadline - time.monotonic()
        if exited_at is None and proc.poll() is not None:
            exited_at = time.monotonic()
        if exited_at is not None and time.monotonic() - exited_at > 0.3:
            # The main process is gone but something it started still holds the pipes.
            left = sandbox.count_processes()
            if left:
                detail = f"Left {left} process(es) running after it exited; they were killed."
            break
        if remaining <= 0:
            status = TIMED_OUT
            detail = f"Stopped after {time_limit:g} s (time limit); every process was killed."
            break
        for key, _ in selector.select(timeout=min(remaining, 0.1)):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                continue
            buffers[key.fileobj].extend(chunk)
        if len(out) + len(err) > cap:
            status = ERROR
            detail = f"Stopped: printed more than {cap} bytes (output limit)."
            break
    selector.close()
    if status is not None or exited_at is not None:
        sandbox.kill_everything(proc)
    try:
        proc.wait(timeout=max(0.1, deadline - time.monotonic()) if status is None else 5)
    except subprocess.TimeoutExpired:
        status = TIMED_OUT
        detail = f"Stopped after {time_limit:g} s (time limit); every process was killed."
        sandbox.kill_everything(proc)
        proc.wait()
    return RunResult(
        status=status or "",
        output=bytes(out[:cap]).decode(errors="replace"),
        stderr=bytes(err[:cap]).decode(errors="replace"),
        detail=detail,
        exit_code=proc.returncode,
    )


def _judge(result: RunResult, expected: str, memory_limit_mb: int) -> RunResult:
    code = result.exit_code
    if code == 0:
        if normalise(result.output) == normalise(expected):
            result.status = PASSED
            result.detail = "Output matches."
        else:
            result.status = FAILED
            result.diff = output_diff(expected, result.output)
            result.detail = "Output differs from the expected output."
        return result
    result.status = ERROR
    if "MemoryError" in result.stderr or code == -signal.SIGSEGV:
        result.detail = f"Ran out of memory (limit {memory_limit_mb} MB)."
    elif code is not None and code < 0:
        name = signal.Signals(-code).name
        reason = {
            "SIGXCPU": "used up its CPU time",
            "SIGXFSZ": "wrote a file over the size limit",
            "SIGKILL": "was killed",
        }.get(name, "was stopped by a signal")
        result.detail = f"The process {reason} ({name})."
    else:
        last = result.stderr.strip().splitlines()[-1:] or [""]
        result.detail = f"Exited with status {code}. {last[0]}".strip()
    return result

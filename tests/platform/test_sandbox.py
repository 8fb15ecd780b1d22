"""The snippet sandbox: verdicts, limits and containment, probed against the real bubblewrap.

The probes named ``test_finding_<n>_…`` turn the findings of issue 10 into tests: each one runs
the attack through the real sandbox and checks that it is contained.
"""

import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from notebook import services
from notebook.models import SnippetRun
from platform import sandbox as runner
from tests.notebook.factories import SnippetCheckFactory
from tests.support import ROOT
from tests.support.waiting import wait_until

AS_ROOT = os.geteuid() == 0
MB = 1024 * 1024


def _sandbox_missing() -> str:
    if not os.access(settings.SANDBOX_BWRAP, os.X_OK):
        return f"bubblewrap is not installed at {settings.SANDBOX_BWRAP}"
    return ""


pytestmark = pytest.mark.django_db
WITHOUT_BWRAP = {"test_normalise_strips_trailing_space_and_newlines"}
needs_root = pytest.mark.skipif(not AS_ROOT, reason="only root may make cgroups here")


@pytest.fixture(autouse=True)
def _needs_bwrap(request):
    """Skip with a reason where bubblewrap is missing, except in CI, where these must run."""
    name = request.node.originalname
    if name in WITHOUT_BWRAP or name.startswith("test_sandbox_without_"):
        return
    if _sandbox_missing() and os.environ.get("CI") != "true":
        pytest.skip(_sandbox_missing())


def run(code: str, expected: str = "", packages: str = "", **limits) -> SnippetRun:
    check = SnippetCheckFactory(code=code, expected_output=expected, packages=packages)
    return services.run_check(check=check, time_limit=limits.get("time_limit", 5))


def sandboxed(code: str, expected: str = "", **kwargs) -> runner.RunResult:
    kwargs.setdefault("time_limit", 5)
    return runner.run_snippet(code, expected_output=expected, **kwargs)


# --- verdicts ------------------------------------------------------------------------------------


def test_runner_pass_records_run_and_latest():
    result = run(
        "import numpy as np\nprint(np.var([10, 12, 23, 23, 16, 23, 21, 16]))", "24.0", "numpy"
    )
    assert result.status == SnippetRun.Status.PASSED
    assert result.output == "24.0\n"
    assert result.diff == ""
    assert result.snippet_check.latest_run == result
    assert result.snippet_check.is_passing is True


def test_runner_trailing_whitespace_and_crlf_are_normalised():
    result = run("print('a   ')\nprint('b', end='\\r\\n\\n\\n')", "a\nb")
    assert result.status == SnippetRun.Status.PASSED


def test_runner_fail_keeps_unified_diff():
    result = run("print('a')\nprint('b')", "a\nc")
    assert result.status == SnippetRun.Status.FAILED
    assert result.diff == "--- expected\n+++ actual\n@@ -1,2 +1,2 @@\n a\n-c\n+b"
    assert result.detail.startswith("Output differs from the expected output.")


def test_runner_exception_is_error_with_traceback():
    result = run("raise ValueError('boom')", "")
    assert result.status == SnippetRun.Status.ERROR
    assert result.exit_code == 1
    assert "ValueError: boom" in result.output
    assert "ValueError: boom" in result.detail


def test_runner_infinite_loop_times_out():
    result = run("while True:\n    pass", "", time_limit=2)
    assert result.status == SnippetRun.Status.TIMED_OUT
    assert result.detail.startswith("Stopped after 2 s (time limit)")
    assert 1.9 < result.duration < 4


def test_runner_memory_blowup_is_stopped():
    result = run("x = []\nwhile True:\n    x.append(' ' * 10**7)", "")
    assert result.status == SnippetRun.Status.ERROR
    assert result.detail.startswith("Ran out of memory (limit 512 MB).")


def test_runner_numpy_allocation_over_limit_is_stopped():
    result = run("import numpy as np\nprint(np.ones(2**31).sum())", "", "numpy")
    assert result.status == SnippetRun.Status.ERROR
    assert result.detail.startswith("Ran out of memory")


def test_runner_missing_package_is_not_run_and_not_passing():
    result = run("import torch\nprint(1)", "1", "numpy, torch_not_installed_here")
    assert result.status == SnippetRun.Status.NOT_RUN
    assert result.detail == "Not run: needs torch_not_installed_here, not installed on this server."
    assert result.snippet_check.is_passing is False


NETWORK = """\
import socket
try:
    socket.create_connection(("1.1.1.1", 80), timeout=3).close()
    print("connected")
except OSError:
    print("blocked")
"""


def test_runner_network_attempt_is_blocked():
    result = run(NETWORK, "blocked")
    assert result.network_isolated is True
    assert result.status == SnippetRun.Status.PASSED
    assert result.output == "blocked\n"


def test_runner_environment_is_minimal_and_folder_empty():
    code = (
        "import os, sys\nprint(sorted(os.environ))\n"
        "print(os.listdir('.'))\nprint(sys.flags.isolated)"
    )
    result = run(code)
    lines = result.output.splitlines()
    assert "DJANGO_SETTINGS_MODULE" not in lines[0]
    assert "DATABASE_URL" not in lines[0]
    assert lines[1:] == ["[]", "1"]


FORK_BOMB = """\
import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as exc:
    print("fork refused:", type(exc).__name__)
"""


def _processes_of(uid: int) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if f"\nUid:\t{uid}\t" in status and "\nState:\tZ" not in status:
            found.append(pid)
    return found


def test_runner_fork_bomb_is_capped_and_reaped():
    result = run(FORK_BOMB, "fork refused: BlockingIOError", time_limit=5)
    assert result.status == SnippetRun.Status.PASSED
    direct = sandboxed(FORK_BOMB, "fork refused: BlockingIOError")
    assert direct.status == runner.PASSED
    # The forked sleepers died with the run's PID namespace; nothing of it is left.
    assert _processes_of(direct.sandbox_uid) == []
    assert not any(p.name.startswith(f"snippet-{os.getpid()}-") for p in _run_cgroup_parents())


WRITE_OUTSIDE = """\
import os
for path in [{target!r}, "/etc/snippet-was-here", "inside.txt"]:
    try:
        with open(path, "w") as f:
            f.write("x")
        print("wrote", os.path.basename(path))
    except OSError as exc:
        print("refused", os.path.basename(path))
"""


def test_runner_cannot_write_outside_its_folder(tmp_path):
    target = tmp_path / "outside.txt"
    tmp_path.chmod(0o777)  # even a world-writable folder outside is out of reach (private /tmp)
    result = run(WRITE_OUTSIDE.format(target=str(target)))
    assert result.output.splitlines() == [
        "refused outside.txt",
        "refused snippet-was-here",
        "wrote inside.txt",
    ]
    assert not target.exists()
    assert not Path("/etc/snippet-was-here").exists()


def test_runner_output_flood_is_cut():
    result = run("while True:\n    print('x' * 1000)")
    assert result.status == SnippetRun.Status.ERROR
    assert result.detail.startswith("Stopped: printed more than 64000 bytes (output limit).")
    assert len(result.output) <= 64_000


def test_normalise_strips_trailing_space_and_newlines():
    assert runner.normalise("a  \r\nb\t\r\n\n\n") == "a\nb"


def test_runner_missing_interpreter_is_recorded_as_error_not_raised(tmp_path):
    result = runner.run_snippet("print(1)", expected_output="1", python=str(tmp_path / "x"))
    assert result.status == "error"
    assert result.detail.startswith("The sandboxed interpreter did not start:")


# --- sandbox unavailable: refused, never run uncontained -----------------------------------------


def test_sandbox_without_bwrap_refuses_the_check(settings, tmp_path):
    marker = tmp_path / "ran"
    settings.SANDBOX_BWRAP = str(tmp_path / "no-such-bwrap")
    result = run(f"open({str(marker)!r}, 'w').write('x')\nprint(1)", "1")
    assert result.status == SnippetRun.Status.UNAVAILABLE
    assert result.detail == (
        f"Sandbox unavailable: bubblewrap is not installed at {tmp_path / 'no-such-bwrap'}. "
        "The check was not run."
    )
    assert result.snippet_check.is_passing is False
    assert not marker.exists()


def test_sandbox_without_user_namespaces_refuses_the_check(tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the "
        "kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    result = sandboxed("print(1)", "1", config=runner.SandboxConfig(bwrap=str(fake)))
    assert result.status == runner.UNAVAILABLE
    assert result.detail.startswith("Sandbox unavailable: bwrap: No permissions to create new")
    assert result.output == ""


def test_sandbox_without_a_writable_cgroup_refuses_the_check():
    config = runner.SandboxConfig(cgroup="/no-such-cgroup-for-snippets")
    result = sandboxed("print(1)", "1", config=config)
    assert result.status == runner.UNAVAILABLE
    assert "cgroup" in result.detail
    assert result.detail.endswith("The check was not run.")


# --- finding 1: host Unix-domain sockets ---------------------------------------------------------

UNIX_CONNECT = """\
import socket
for path in {paths!r}:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print("connected", path)
    except OSError:
        print("refused")
"""


def _host_unix_sockets(limit: int = 20) -> list[str]:
    paths = []
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) == 8 and fields[7].startswith("/") and fields[7] not in paths:
            paths.append(fields[7])
    return paths[:limit]


def test_finding_1_host_unix_sockets_are_unreachable():
    folder = Path(tempfile.mkdtemp(prefix="sbx-sock-", dir="/tmp"))
    folder.chmod(0o777)
    listener = socket.socket(socket.AF_UNIX)
    own = str(folder / "listening.sock")
    listener.bind(own)
    os.chmod(own, 0o777)  # noqa: S103 - reachable by anyone on the host
    listener.listen()
    abstract = socket.socket(socket.AF_UNIX)  # no file at all: only the network namespace hides it
    hidden_name = f"\0sbx-probe-{secrets.token_hex(4)}"
    abstract.bind(hidden_name)
    abstract.listen()
    try:
        for reachable in (own, hidden_name):  # reachable from the host: the probe is meaningful
            probe = socket.socket(socket.AF_UNIX)
            probe.connect(reachable)
            probe.close()
        paths = ["/var/run/postgresql/.s.PGSQL.5432", own, hidden_name, *_host_unix_sockets()]
        result = sandboxed(UNIX_CONNECT.format(paths=paths), "refused\n" * len(paths))
        assert result.status == runner.PASSED, result.detail
        assert result.output.splitlines() == ["refused"] * len(paths)
    finally:
        listener.close()
        abstract.close()
        Path(own).unlink()
        folder.rmdir()


# --- finding 2: host files ------------------------------------------------------------------------

READ_FILES = """\
import os
for path in {paths!r}:
    try:
        with open(path, "rb") as f:
            f.read(1)
        print("read", path)
    except OSError:
        print("refused")
names = set(os.listdir("/"))
print(sorted(names & {{"home", "run", "var", "srv", "sys", "mnt", "media", "boot", "work"}}))
print(sorted(os.listdir("/etc")))
cmdlines = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        cmdlines.append(open(f"/proc/{{pid}}/cmdline", "rb").read())
print(any(b"pytest" in c for c in cmdlines), len(cmdlines) < 5)
"""


def test_finding_2_host_files_and_processes_are_unreadable():
    # The finding: a SQLite file under a VAR_DIR outside /tmp. A checkout under /tmp (a CI clone)
    # would be hidden by the sandbox's private /tmp anyway; probe a world-readable folder outside.
    var_dir = Path(settings.VAR_DIR)
    if str(var_dir.resolve()).startswith("/tmp/"):
        var_dir = Path(tempfile.mkdtemp(prefix="sbx-probe-", dir="/var/tmp"))
        var_dir.chmod(0o755)
    secret_db = var_dir / f"probe-{secrets.token_hex(4)}.sqlite3"
    assert not str(secret_db.resolve()).startswith("/tmp/")
    secret_db.parent.mkdir(parents=True, exist_ok=True)
    secret_db.write_text("password hashes and session keys")
    secret_db.chmod(0o644)
    try:
        paths = [
            "/etc/passwd",
            "/etc/shadow",
            str(ROOT / "platform" / "settings.py"),
            str(secret_db),
        ]
        assert Path("/etc/passwd").exists() and (ROOT / "platform/settings.py").exists()
        result = sandboxed(READ_FILES.format(paths=paths))
        assert result.exit_code == 0, result.detail
        assert result.output.splitlines() == [
            *(["refused"] * 4),
            "[]",
            "['ld.so.cache']",
            "False True",
        ]
    finally:
        secret_db.unlink()
        if var_dir != Path(settings.VAR_DIR):
            var_dir.rmdir()


def test_finding_2_interpreter_sees_only_allowed_site_packages():
    code = (
        "import importlib.util\n"
        "print([n for n in ('numpy', 'django', 'psycopg', 'celery', 'notebook', 'platform')"
        " if importlib.util.find_spec(n) and n != 'platform'])\n"
        "import platform\nprint(platform.__file__.endswith('/platform.py'))"
    )
    result = sandboxed(code)
    assert result.output.splitlines() == ["['numpy']", "True"]


# --- finding 3: an unprivileged id of its own; finding 14: venv under a mode-700 home ------------


def test_finding_3_root_worker_runs_snippet_as_throwaway_user():
    code = "import os\nprint(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())"
    result = sandboxed(code)
    uid, euid, gid, groups = result.output.split(" ", 3)
    assert int(uid) == int(euid) == int(gid) == result.sandbox_uid
    assert result.sandbox_uid >= runner.SANDBOX_UID_BASE
    assert groups.strip() == "[]"
    status = sandboxed("print(open('/proc/self/status').read())").output
    assert "CapEff:\t0000000000000000" in status
    assert "CapPrm:\t0000000000000000" in status
    assert "NoNewPrivs:\t1" in status


def test_finding_3_root_worker_snippet_cannot_touch_project_files_or_siblings():
    target = Path(settings.VAR_DIR) / f"writable-{secrets.token_hex(4)}.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("kept")
    target.chmod(0o666)  # even a world-writable file of the project is out of reach
    sibling = subprocess.Popen(["/bin/sleep", "60"])
    try:
        code = CONTAINED_WORKER.format(uid=0, project=str(target), sibling=sibling.pid)
        result = sandboxed(code, "True\nproject refused\nkill refused")
        assert result.status == runner.PASSED, result.output
        assert target.read_text() == "kept"
        assert sibling.poll() is None
    finally:
        sibling.kill()
        sibling.wait()
        target.unlink()


def _cgroup_v1_dirs() -> dict[str, Path]:
    _v2, v1 = runner._cgroup_mounts()
    own = runner._own_cgroups()
    if "memory" not in v1 or "pids" not in v1:
        return {}
    return {c: v1[c] / own[c].lstrip("/") for c in ("memory", "pids", "cpu") if c in v1}


def _run_cgroup_parents() -> list[Path]:
    return [p for d in _cgroup_v1_dirs().values() for p in d.iterdir() if p.is_dir()]


def _chown_tree(top: Path, uid: int) -> None:
    for folder, dirs, files in os.walk(top):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.chown(name, uid, uid, follow_symlinks=False)


@pytest.fixture
def nonroot_worker():
    """A throw-away worker uid with its own mode-700 home holding its venv and "project" files,
    a delegated cgroup (v1) and a sibling process; runs ``platform.sandbox`` as that uid."""
    if not AS_ROOT:
        pytest.skip("making a throw-away worker user and delegating it a cgroup needs root")
    dirs = _cgroup_v1_dirs()
    if not dirs:
        pytest.skip("delegating a cgroup v2 subtree to a throw-away user is not done in tests")
    uid = 0x79000000 + secrets.randbelow(1 << 16)
    home = Path(tempfile.mkdtemp(prefix="sbx-home-", dir="/tmp"))
    # The system interpreter: the test's own may sit under /root, closed to this uid.
    subprocess.run(
        ["/usr/bin/python3", "-m", "venv", "--without-pip", str(home / "venv")], check=True
    )
    (home / "project").mkdir()
    (home / "project" / "settings.py").write_text("SECRET_KEY = 'x'\n")
    _chown_tree(home, uid)
    home.chmod(0o700)
    name = f"sbx-test-{secrets.token_hex(4)}"
    for folder in dirs.values():
        (folder / name).mkdir()
        _chown_tree(folder / name, uid)
    as_worker = ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    sibling = subprocess.Popen([*as_worker, "sleep", "60"], env=env)

    class Worker:
        pass

    worker = Worker()
    worker.uid, worker.home, worker.sibling = uid, home, sibling
    worker.python = str(home / "venv" / "bin" / "python")

    def run_as_worker(code: str, expected: str = "", **kwargs) -> dict:
        script = (
            "import dataclasses, json, sys\n"
            f"sys.path.insert(0, {str(ROOT)!r})\n"
            "from platform import sandbox\n"
            f"config = sandbox.SandboxConfig(cgroup={name!r}, packages=())\n"
            f"r = sandbox.run_snippet({code!r}, expected_output={expected!r}, config=config,"
            f" **{kwargs!r})\n"
            "print(json.dumps(dataclasses.asdict(r)))\n"
        )
        done = subprocess.run(
            [*as_worker, worker.python, "-c", script],
            env=env,
            cwd=str(home),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    worker.run = run_as_worker
    try:
        yield worker
    finally:
        sibling.kill()
        sibling.wait()
        for folder in dirs.values():
            for child in sorted((folder / name).glob("*/"), reverse=True):
                child.rmdir()
            (folder / name).rmdir()
        shutil.rmtree(home)


CONTAINED_WORKER = """\
import os, signal
print(os.getuid() != {uid})
try:
    with open({project!r}, "a") as f:
        f.write("pwned")
    print("wrote project")
except OSError:
    print("project refused")
try:
    os.kill({sibling}, signal.SIGKILL)
    print("killed sibling")
except OSError:
    print("kill refused")
"""


def test_finding_3_and_14_nonroot_worker_snippet_is_another_user(nonroot_worker):
    worker = nonroot_worker
    project = worker.home / "project" / "settings.py"
    code = CONTAINED_WORKER.format(uid=worker.uid, project=str(project), sibling=worker.sibling.pid)
    result = worker.run(code, "True\nproject refused\nkill refused")
    assert result["status"] == runner.PASSED, result
    assert result["sandbox_uid"] != worker.uid
    assert project.read_text() == "SECRET_KEY = 'x'\n"
    assert worker.sibling.poll() is None  # still running


def test_finding_4_nonroot_worker_memory_cap_holds_across_processes(nonroot_worker):
    result = nonroot_worker.run(FORKED_HOGS, "", time_limit=20)
    assert result["status"] == runner.ERROR
    assert result["detail"].startswith("Ran out of memory (limit 512 MB).")
    assert result["peak_memory_bytes"] <= 512 * MB


def test_finding_14_venv_under_a_closed_home_still_runs(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], check=True)
    home.chmod(0o700)
    result = sandboxed(
        "import sys\nprint(sys.version_info[:2])",
        "(3, 11)",
        python=str(home / "venv" / "bin" / "python"),
    )
    assert result.status == runner.PASSED, result.detail


# --- finding 4: memory per run, across all of its processes --------------------------------------

FORKED_HOGS = """\
import os, time
children = []
for _ in range(6):
    pid = os.fork()
    if pid == 0:
        block = b"x" * (200 * 1024 * 1024)
        time.sleep(4)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print("all six held 200 MB")
"""


def test_finding_4_memory_cap_holds_across_forked_processes():
    result = sandboxed(FORKED_HOGS, "all six held 200 MB", time_limit=20)
    assert result.status == runner.ERROR
    assert result.detail.startswith("Ran out of memory (limit 512 MB).")
    assert result.peak_memory_bytes is not None
    assert result.peak_memory_bytes <= 512 * MB


def test_finding_4_processes_are_capped_per_run():
    code = (
        "import threading, time\nn = 0\ntry:\n    while True:\n"
        "        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "        n += 1\nexcept RuntimeError:\n    print(n < 32)"
    )
    result = sandboxed(code, "True")
    assert result.status == runner.PASSED, result.detail


# --- finding 5: nothing written outlives the run; the space is capped ----------------------------

WRITE_EVERYWHERE = """\
import os
for folder in ["/tmp", "/dev/shm", "/run/lock", "/var/tmp", "/"]:
    try:
        with open(os.path.join(folder, {name!r}), "w") as f:
            f.write("x")
        print("wrote", folder)
    except OSError:
        print("refused", folder)
written = 0
try:
    with open("/tmp/fill", "wb") as f:
        while True:
            f.write(b"x" * (1024 * 1024))
            f.flush()
            written += 1
except OSError:
    pass
print("stopped at", written, "MB")
"""


def test_finding_5_files_do_not_outlive_the_run_and_space_is_capped():
    name = f"snippet-probe-{secrets.token_hex(4)}"
    result = sandboxed(WRITE_EVERYWHERE.format(name=name))
    assert result.output.splitlines() == [
        "wrote /tmp",
        "wrote /dev/shm",
        "refused /run/lock",
        "refused /var/tmp",
        "refused /",
        f"stopped at {settings.SNIPPET_DISK_MB - 1} MB",
    ]
    for folder in ["/tmp", "/dev/shm", "/run/lock", "/var/tmp", "/"]:
        assert not (Path(folder) / name).exists()
    again = sandboxed("import os\nprint(os.listdir('/tmp'), os.listdir('/dev/shm'))")
    assert again.output == "[] []\n"


# --- finding 6: packages are resolved inside the sandbox -----------------------------------------


def test_finding_6_packages_are_resolved_inside_the_sandbox(capsys):
    assert "this" not in sys.modules
    result = sandboxed("print(1)", "1", packages=["this.x"])
    assert result.status == runner.NOT_RUN
    assert result.detail == "Not run: needs this.x, not installed on this server."
    assert "this" not in sys.modules
    assert "Beautiful is better than ugly" not in capsys.readouterr().out
    # The worker has Django; the sandbox does not, and only the sandbox's view counts.
    assert sandboxed("print(1)", "1", packages=["django"]).status == runner.NOT_RUN
    assert sandboxed("print(1)", "1", packages=["numpy"]).status == runner.PASSED


def test_finding_6_saving_a_check_with_packages_does_not_import_them_in_the_worker():
    assert "this" not in sys.modules
    result = run("print(1)", "1", "this.x")
    assert result.status == SnippetRun.Status.NOT_RUN
    assert "this" not in sys.modules


def test_runner_result_fields_callers_use():
    names = {f.name for f in dataclasses.fields(runner.RunResult)}
    assert {"status", "output", "stderr", "exit_code", "detail", "diff", "duration"} <= names
    assert "network_isolated" in names


def test_run_kills_the_run_when_the_worker_signal_arrives():
    # A snippet that ignores SIGTERM and hides in a new session is still gone after the run.
    code = (
        "import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "if os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('parent done')"
    )
    result = sandboxed(code, "parent done")
    assert result.status == runner.PASSED
    assert _processes_of(result.sandbox_uid) == []
    assert signal.SIGTERM  # the worker itself was never touched


# --- system calls and CPU ------------------------------------------------------------------------

SYSCALLS = """\
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
for name, call in [
    ("unshare(CLONE_NEWUSER)", lambda: libc.unshare(0x10000000)),
    ("keyctl", lambda: libc.syscall(250, 0, -3, 0, 0, 0)),
    ("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
]:
    ctypes.set_errno(0)
    print(name, call(), errno.errorcode.get(ctypes.get_errno()))
pid = os.fork()
if pid == 0:
    os._exit(7)
print("fork", os.waitpid(pid, 0)[1] >> 8)
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp filter is for x86-64")
def test_sandbox_denies_namespaces_keyrings_and_mounts_but_not_fork():
    expected = "unshare(CLONE_NEWUSER) -1 EPERM\nkeyctl -1 EPERM\nmount -1 EPERM\nfork 7"
    result = sandboxed(SYSCALLS, expected)
    assert result.status == runner.PASSED, result.output + result.stderr


CPU_HOGS = """\
import os, resource, time
for _ in range(2):
    if os.fork() == 0:
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            pass
        os._exit(0)
os.wait()
os.wait()
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(round(used.ru_utime + used.ru_stime, 1))
"""


def test_sandbox_cpu_is_one_core_per_run_across_processes():
    result = sandboxed(CPU_HOGS, time_limit=10)
    assert result.exit_code == 0, result.stderr
    # Two busy processes for two seconds of wall clock share one core: about 2 s, never 4.
    assert float(result.output) <= 2.6


@needs_root
def test_sandbox_sweeps_cgroups_left_by_a_dead_worker():
    dead = subprocess.Popen(["/bin/true"])
    dead.wait()
    left = [folder / f"snippet-{dead.pid}-deadbeef" for folder in _cgroup_v1_dirs().values()]
    if not left:
        pytest.skip("the sweep is checked on cgroup v1 here")
    for folder in left:
        folder.mkdir()
    assert sandboxed("print(1)", "1").status == runner.PASSED
    assert [folder for folder in left if folder.exists()] == []


@needs_root
def test_sandbox_dies_with_a_killed_worker():
    dirs = _cgroup_v1_dirs()
    if not dirs:
        pytest.skip("the run's processes are found through its cgroup v1 here")
    script = (
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom platform import sandbox\n"
        "sandbox.run_snippet('import os, time\\nif os.fork() == 0:\\n    time.sleep(60)\\n"
        "time.sleep(60)', time_limit=60)\n"
    )
    worker = subprocess.Popen([sys.executable, "-c", script])
    memory = dirs["memory"]

    def procs() -> list[str]:
        groups = list(memory.glob(f"snippet-{worker.pid}-*"))
        return (groups[0] / "cgroup.procs").read_text().split() if groups else []

    try:
        # Wait until bwrap, its init, the snippet and its child are all in the run's cgroup.
        wait_until(
            lambda: len(procs()) >= 4, timeout=15, interval=0.05, message=lambda: str(procs())
        )
        groups = list(memory.glob(f"snippet-{worker.pid}-*"))
        worker.kill()
        worker.wait()
        wait_until(
            lambda: not (groups[0] / "cgroup.procs").read_text().split(), timeout=5, interval=0.05
        )
        assert (groups[0] / "cgroup.procs").read_text().split() == []
    finally:
        worker.kill()
        worker.wait()
        for folder in dirs.values():
            for group in folder.glob(f"snippet-{worker.pid}-*"):
                group.rmdir()

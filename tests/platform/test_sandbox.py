"""The snippet runner: verdicts, limits and containment, through services.run_check."""

import os
from pathlib import Path

import pytest

from notebook import services
from notebook.models import SnippetRun
from platform import sandbox as runner
from tests.notebook.factories import SnippetCheckFactory

pytestmark = pytest.mark.django_db

AS_ROOT = os.geteuid() == 0


def run(code: str, expected: str = "", packages: str = "", **limits) -> SnippetRun:
    check = SnippetCheckFactory(code=code, expected_output=expected, packages=packages)
    return services.run_check(check=check, time_limit=limits.get("time_limit", 5))


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


def test_runner_network_attempt_is_blocked_or_recorded():
    result = run(NETWORK, "blocked")
    if result.network_isolated:
        assert result.status == SnippetRun.Status.PASSED
        assert result.output == "blocked\n"
    else:  # a system without namespaces: the run must say so
        assert "net=open" in result.detail


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


@pytest.mark.skipif(not AS_ROOT, reason="a separate user id (and its RLIMIT_NPROC) needs root")
def test_runner_fork_bomb_is_capped_and_reaped():
    result = run(FORK_BOMB, "fork refused: BlockingIOError", time_limit=5)
    assert result.status == SnippetRun.Status.PASSED
    assert "process(es) running after it exited; they were killed." in result.detail
    uids = {
        Path(f"/proc/{p}/status").read_text().split("\nUid:\t")[1].split("\t")[0]
        for p in os.listdir("/proc")
        if p.isdigit()
        and Path(f"/proc/{p}/status").exists()
        and "\nState:\tZ" not in Path(f"/proc/{p}/status").read_text()
    }
    assert not any(int(uid) >= runner.SANDBOX_UID_BASE for uid in uids)


WRITE_OUTSIDE = """\
import os
for path in [{target!r}, "/etc/snippet-was-here", "inside.txt"]:
    try:
        with open(path, "w") as f:
            f.write("x")
        print("wrote", os.path.basename(path))
    except OSError as exc:
        print("refused", os.path.basename(path), exc.strerror)
"""


@pytest.mark.skipif(not AS_ROOT, reason="a separate user id needs root")
def test_runner_cannot_write_outside_its_folder(tmp_path):
    target = tmp_path / "outside.txt"
    tmp_path.chmod(0o777)  # even a world-writable folder outside is out of reach (private /tmp)
    result = run(WRITE_OUTSIDE.format(target=str(target)))
    assert result.output.splitlines()[1:] == [
        "refused snippet-was-here Permission denied",
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

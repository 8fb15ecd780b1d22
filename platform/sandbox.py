"""Run one snippet inside a bubblewrap sandbox and judge its output.

:func:`run_snippet` takes the code and the limits and returns a :class:`RunResult`; it never
raises for anything the snippet does. Both the notebook's snippet checks and the courses' listing
checks go through it.

What the snippet sees (built with ``bwrap``, the tool Flatpak uses):

* a root file system that is an empty, read-only tmpfs holding only read-only binds of the
  interpreter binary, its standard library, the shared libraries they load (found with ``ldd``),
  ``/etc/ld.so.cache`` and the distributions listed in ``SANDBOX_PACKAGES`` (numpy by default),
  the latter under ``/opt/snippet-site``. No ``/home``, ``/root``, ``/run``, ``/var``, ``/srv``,
  ``/sys``, project or ``VAR_DIR`` path, no other file of ``/etc``, no host socket;
* a private, size-capped ``/tmp`` (its working folder and ``HOME``) and ``/dev/shm``, both gone
  when the run ends, its own ``/proc`` (new PID namespace) and a minimal ``/dev``;
* new network, IPC, PID, UTS and cgroup namespaces, a new session, and ``--die-with-parent``;
* a seccomp filter (x86-64) refusing the system calls no snippet needs: new namespaces, mounts,
  kernel keyrings, ptrace, bpf, perf events, userfaultfd, io_uring, module and kexec loading;
* an unprivileged user id of its own. As root, bwrap builds the sandbox with real privileges (so
  interpreters under mode-700 homes such as ``/root/.pyenv`` can be bound) and the first thing
  the interpreter does, before it reads the snippet, is drop to a throw-away uid/gid with no
  groups and no capabilities. As any other user, bwrap runs unprivileged in a new user namespace
  (``--disable-userns`` forbids nesting) with a uid inside that differs from the worker's.

Limits per run, across all of its processes, come from a cgroup made for the run (v2, or v1's
memory/pids/cpu hierarchies): total memory including its tmpfs (``memory.max`` /
``memory.limit_in_bytes``, no swap), the number of processes and threads (``pids.max``) and one
CPU's worth of time (the quota; with the wall-clock limit this bounds the total CPU). On top come
per-process rlimits (address space, CPU seconds, file size, open files, no core dumps), the wall
clock (everything is SIGKILLed when it passes) and a cap on output bytes.

When bwrap, the namespaces or a writable cgroup are missing, the check is refused with status
``unavailable``; it never runs uncontained.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
import os
import secrets
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
TIMED_OUT = "timed_out"
NOT_RUN = "not_run"
UNAVAILABLE = "unavailable"

SANDBOX_UID_BASE = 0x7A000000  # far above any real account; one fresh id per run
SITE_DIR = "/opt/snippet-site"  # where the allowed distributions appear inside the sandbox
WORK_DIR = "/tmp"  # noqa: S108 - the sandbox's own private tmpfs
SHM_DIR = "/dev/shm"  # noqa: S108 - the sandbox's own tmpfs
SHM_BYTES = 1024 * 1024
CPU_PERIOD_US = 100_000


@dataclass(frozen=True)
class SandboxConfig:
    """What the settings decide about the sandbox (see README, "Configuration")."""

    bwrap: str = "/usr/bin/bwrap"
    cgroup: str = ""  # a cgroup path under which runs get their own group; "" = the worker's own
    packages: tuple[str, ...] = ("numpy",)  # distributions a snippet may import
    max_processes: int = 32
    disk_mb: int = 16


def current_config() -> SandboxConfig:
    """The configuration from Django's settings when they are loaded, defaults otherwise."""
    try:
        from django.conf import settings

        configured = settings.configured
    except ImportError:  # pragma: no cover - Django is always installed here
        configured = False
    if not configured:
        return SandboxConfig()
    default = SandboxConfig()
    return SandboxConfig(
        bwrap=getattr(settings, "SANDBOX_BWRAP", default.bwrap),
        cgroup=getattr(settings, "SANDBOX_CGROUP", default.cgroup),
        packages=tuple(getattr(settings, "SANDBOX_PACKAGES", default.packages)),
        max_processes=getattr(settings, "SNIPPET_MAX_PROCESSES", default.max_processes),
        disk_mb=getattr(settings, "SNIPPET_DISK_MB", default.disk_mb),
    )


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
    sandbox_uid: int | None = None  # the uid the snippet ran as, inside the sandbox
    peak_memory_bytes: int | None = None  # the run's cgroup high-water mark, all processes

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


class Unavailable(Exception):
    """The sandbox cannot be built here; the check must not run."""


# --- the cgroup of one run ----------------------------------------------------------------------


def _cgroup_mounts() -> tuple[Path | None, dict[str, Path]]:
    """The cgroup2 mount point and the v1 mount point of each v1 controller."""
    v2: Path | None = None
    v1: dict[str, Path] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _source, options = [*right.split(" "), "", ""][:3]
        mount_point = Path(left.split(" ")[4].replace("\\040", " "))
        if fstype == "cgroup2" and v2 is None:
            v2 = mount_point
        elif fstype == "cgroup":
            for option in options.split(","):
                v1.setdefault(option, mount_point)
    return v2, v1


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" its v2 path."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _sweep(parent: Path) -> None:
    """Remove the empty cgroups of runs whose worker died before it could clean up."""
    with contextlib.suppress(OSError):
        for child in parent.glob("snippet-*-*"):
            pid = child.name.split("-")[1]
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    child.rmdir()  # fails (and stays) while a process is still in it
            except PermissionError:
                continue


class _Cgroup:
    """A cgroup made for one run, with its limits; removed (after a kill) when the run ends."""

    def __init__(self, version: int, dirs: dict[str, Path]):
        self.version = version
        self.dirs = dirs  # v1: controller -> folder; v2: {"": folder}

    @classmethod
    def create(cls, config: SandboxConfig, *, memory_bytes: int) -> _Cgroup:
        name = f"snippet-{os.getpid()}-{secrets.token_hex(4)}"
        v2_mount, v1_mounts = _cgroup_mounts()
        own = _own_cgroups()

        def under(mount: Path, controller: str) -> Path:
            if config.cgroup.startswith("/"):  # absolute in the hierarchy
                return mount / config.cgroup.lstrip("/")
            mine = mount / own.get(controller, "/").lstrip("/")
            return mine / config.cgroup if config.cgroup else mine  # relative to the worker's

        if "memory" in v1_mounts and "pids" in v1_mounts:
            parents = {
                c: under(v1_mounts[c], c) for c in ("memory", "pids", "cpu") if c in v1_mounts
            }
            for controller, parent in parents.items():
                if controller != "cpu" and not os.access(parent, os.W_OK):
                    raise Unavailable(
                        f"the {controller} cgroup {parent} is not writable by this worker "
                        "(delegate one and name it in SANDBOX_CGROUP)"
                    )
            if "cpu" in parents and not os.access(parents["cpu"], os.W_OK):
                del parents["cpu"]
            group = cls(1, {c: p / name for c, p in parents.items()})
        elif v2_mount is not None:
            parent = under(v2_mount, "")
            try:
                available = (parent / "cgroup.controllers").read_text().split()
                wanted = [c for c in ("memory", "pids", "cpu") if c in available]
                if "memory" not in wanted or "pids" not in wanted:
                    raise Unavailable(f"the cgroup {parent} has no memory or pids controller")
                enabled = (parent / "cgroup.subtree_control").read_text().split()
                missing = [c for c in wanted if c not in enabled]
                if missing:
                    (parent / "cgroup.subtree_control").write_text(
                        " ".join("+" + c for c in missing)
                    )
            except OSError as exc:
                raise Unavailable(
                    f"cannot use the cgroup {parent} ({exc.strerror}); give the worker a "
                    "delegated cgroup without processes of its own and name it in SANDBOX_CGROUP"
                ) from exc
            group = cls(2, {"": parent / name})
        else:
            raise Unavailable("no cgroup file system is mounted")
        for folder in group.dirs.values():
            _sweep(folder.parent)
        try:
            group._make(memory_bytes=memory_bytes, processes=config.max_processes)
        except OSError as exc:
            group.remove()
            raise Unavailable(f"cannot set up the run's cgroup: {exc}") from exc
        return group

    def _make(self, *, memory_bytes: int, processes: int) -> None:
        for folder in self.dirs.values():
            folder.mkdir()
        if self.version == 1:
            memory = self.dirs["memory"]
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # swap counts too
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
            (self.dirs["pids"] / "pids.max").write_text(str(processes))
            if "cpu" in self.dirs:
                (self.dirs["cpu"] / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (self.dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(CPU_PERIOD_US))
        else:
            folder = self.dirs[""]
            (folder / "memory.max").write_text(str(memory_bytes))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if (folder / name).exists():
                    (folder / name).write_text(value)
            (folder / "pids.max").write_text(str(processes))
            if (folder / "cpu.max").exists():
                (folder / "cpu.max").write_text(f"{CPU_PERIOD_US} {CPU_PERIOD_US}")

    @property
    def procs_files(self) -> list[str]:
        return [str(folder / "cgroup.procs") for folder in self.dirs.values()]

    @property
    def limited(self) -> list[str]:
        names = ["memory", "pids"]
        if "cpu" in self.dirs or (self.version == 2 and (self.dirs[""] / "cpu.max").exists()):
            names.append("cpu")
        return names

    def _read(self, controller: str, name: str) -> str:
        folder = self.dirs["" if self.version == 2 else controller]
        try:
            return (folder / name).read_text()
        except OSError:
            return ""

    def oom_kills(self) -> int:
        text = self._read("memory", "memory.oom_control" if self.version == 1 else "memory.events")
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def peak_memory(self) -> int | None:
        text = self._read(
            "memory", "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        )
        return int(text) if text.strip().isdigit() else None

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in Path(procs).read_text().split())
        return found

    def kill_all(self) -> None:
        """SIGKILL every process of the run until none is left (at most about two seconds)."""
        if self.version == 2 and (self.dirs[""] / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.dirs[""] / "cgroup.kill").write_text("1")
        for _ in range(200):
            left = self.pids()
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        for folder in self.dirs.values():
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


# --- what is bound into the sandbox ------------------------------------------------------------

_QUERY = """\
import importlib.metadata as md, json, sys, sysconfig
base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix,
        "installed_base": sys.base_prefix, "installed_platbase": sys.base_exec_prefix}
paths = sysconfig.get_paths(vars=base)
dists = {}
for name in json.loads(sys.argv[1]):
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        continue
    tops = sorted({f.parts[0] for f in dist.files or () if f.parts and f.parts[0] != ".."})
    root = str(dist.locate_file(""))
    dists[name] = [[str(dist.locate_file(t)), t] for t in tops if t != "__pycache__"]
print(json.dumps({"stdlib": paths["stdlib"], "platstdlib": paths["platstdlib"],
                  "executable": sys.executable, "dists": dists}))
"""


_HIDDEN_IN_STDLIB = ("site-packages", "dist-packages")  # covered by empty tmpfs in the sandbox


@dataclass(frozen=True)
class _Runtime:
    interpreter: str  # the real interpreter binary (symlinks resolved)
    binds: tuple[tuple[str, str], ...]  # (host path, sandbox path), read-only
    folders: tuple[str, ...]  # folders to create (mode 0755) before the binds
    symlinks: tuple[
        tuple[str, str], ...
    ]  # (target, sandbox path), as on the host (/lib -> usr/lib)
    hidden: tuple[str, ...]  # folders inside the binds covered by an empty read-only tmpfs


def _shared_library_dirs(files: list[str]) -> set[str]:
    """The folders holding every shared library the given ELF files load (with ``ldd``)."""
    if not files:
        return set()
    try:
        out = subprocess.run(
            [shutil.which("ldd") or "/usr/bin/ldd", *files],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"cannot list the interpreter's libraries with ldd: {exc}") from exc
    found: set[str] = set()
    for line in out.splitlines():
        line = line.strip()
        if "=>" in line:
            line = line.split("=>", 1)[1].strip()
        path = line.split(" (", 1)[0].strip()
        if path.startswith("/") and os.path.exists(path):
            found.add(os.path.realpath(os.path.dirname(path)))
            found.add(os.path.dirname(os.path.realpath(path)))
    return found


def _outermost(paths: set[str]) -> list[str]:
    """Drop every path that lies inside another one of the set."""
    kept: list[str] = []
    for path in sorted(paths):
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


@functools.lru_cache(maxsize=8)
def _runtime(python: str, packages: tuple[str, ...]) -> _Runtime:
    """Work out (once per interpreter) what the sandbox must bind for ``python`` to run."""
    try:
        answer = subprocess.run(
            [python, "-I", "-c", _QUERY, json.dumps(list(packages))],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        ).stdout
        facts = json.loads(answer)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise Unavailable(f"cannot inspect the interpreter {python}: {exc}") from exc
    interpreter = os.path.realpath(facts["executable"])
    stdlib = {os.path.realpath(facts["stdlib"]), os.path.realpath(facts["platstdlib"])}
    elf = [interpreter]
    site: list[tuple[str, str]] = []
    for entries in facts["dists"].values():
        for host, name in entries:
            site.append((os.path.realpath(host), f"{SITE_DIR}/{name}"))
    for top in [*stdlib, *(host for host, _ in site)]:
        if os.path.isdir(top):
            for folder, dirs, names in os.walk(top):
                dirs[:] = [d for d in dirs if d not in _HIDDEN_IN_STDLIB]
                elf.extend(os.path.join(folder, n) for n in names if ".so" in n)
    library_dirs = _shared_library_dirs(elf)
    inside_site = tuple(host for host, _ in site)
    library_dirs = {
        d
        for d in library_dirs
        if not any(d == h or d.startswith(h.rstrip("/") + "/") for h in inside_site)
    }
    binds: list[tuple[str, str]] = []
    for path in _outermost(stdlib | library_dirs | {interpreter}):
        binds.append((path, path))
    if os.path.exists("/etc/ld.so.cache"):
        binds.append(("/etc/ld.so.cache", "/etc/ld.so.cache"))
    binds.extend(site)
    folders: set[str] = {SITE_DIR}
    for _host, dest in binds:
        parent = os.path.dirname(dest)
        while parent not in ("/", ""):
            folders.add(parent)
            parent = os.path.dirname(parent)
    symlinks = []
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            symlinks.append((os.readlink(top), top))
            folders.discard(top)
    hidden = sorted(
        os.path.join(lib, name)
        for lib in stdlib
        for name in _HIDDEN_IN_STDLIB
        if os.path.isdir(os.path.join(lib, name))
    )
    return _Runtime(
        interpreter=interpreter,
        hidden=tuple(hidden),
        binds=tuple(binds),
        folders=tuple(sorted(folders, key=lambda p: (p.count("/"), p))),
        symlinks=tuple(symlinks),
    )


# --- inside the sandbox: the first code the interpreter runs ------------------------------------

_BOOT = """\
import json, os, resource, sys
_a = json.loads(sys.argv[1])
for _name, _value in _a["rlimits"]:
    resource.setrlimit(getattr(resource, _name), (_value, _value))
if _a["drop_to"] is not None:
    os.setgroups([])
    os.setresgid(_a["drop_to"], _a["drop_to"], _a["drop_to"])
    os.setresuid(_a["drop_to"], _a["drop_to"], _a["drop_to"])
    if os.getuid() != _a["drop_to"] or os.geteuid() == 0:
        os._exit(125)
sys.path.append(_a["site"])
_report = {"uid": os.getuid(), "missing": []}
if _a["packages"]:
    import contextlib, importlib.util, io
    for _name in _a["packages"]:
        try:
            with contextlib.redirect_stdout(io.StringIO()) as _o, contextlib.redirect_stderr(_o):
                _found = importlib.util.find_spec(_name) is not None
        except (Exception, SystemExit):
            _found = False
        if not _found:
            _report["missing"].append(_name)
os.write(_a["fd"], json.dumps(_report).encode())
os.close(_a["fd"])
if _report["missing"]:
    os._exit(0)
_code = sys.stdin.buffer.read()
sys.argv = ["<snippet>"]
_globals = {"__name__": "__main__", "__builtins__": __builtins__}
del _a, _name, _value, _report
try:
    exec(compile(_code, "<snippet>", "exec"), _globals)
except SystemExit:
    raise
except BaseException as _exc:
    import traceback
    traceback.print_exception(type(_exc), _exc, _exc.__traceback__.tb_next)
    sys.stderr.flush()
    sys.exit(1)
"""


# --- a seccomp filter: system calls a snippet never needs ----------------------------------------

# x86-64 numbers. Denied with EPERM: new namespaces (unshare, setns, clone with CLONE_NEWUSER; a
# root worker's sandbox has no user namespace of its own to forbid nesting in), mounting, kernel
# keyrings (shared by every process of a uid), ptrace, bpf, perf, userfaultfd, io_uring, module
# and kexec loading, and the rest of the administrator's calls. clone3 answers ENOSYS so that
# libc falls back to clone, whose flags the filter can see. x32 and foreign ABIs are refused.
_DENIED_SYSCALLS = {
    "ptrace": 101, "syslog": 103, "uselib": 134, "personality": 135, "pivot_root": 155,
    "chroot": 161, "acct": 163, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168,
    "reboot": 169, "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176,
    "quotactl": 179, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250,
    "unshare": 272, "perf_event_open": 298, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "setns": 308, "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442,
}  # fmt: skip
_CLONE, _CLONE3, _CLONE_NEWUSER = 56, 435, 0x10000000
_AUDIT_ARCH_X86_64 = 0xC000003E


def seccomp_filter() -> bytes | None:
    """The classic-BPF program bwrap loads with ``--seccomp`` (None off x86-64)."""
    if os.uname().machine != "x86_64":
        return None
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, kill, errno = 0x7FFF0000, 0x80000000, 0x00050000
    # (code, jump-if-true label, jump-if-false label, k); labels resolve to offsets below.
    program: list[tuple[int, str | None, str | None, int] | str] = [
        (ld, None, None, 4),  # the ABI
        (jeq, None, "kill", _AUDIT_ARCH_X86_64),
        (ld, None, None, 0),  # the system call number
        (jge, "eperm", None, 0x40000000),  # x32
        *((jeq, "eperm", None, nr) for nr in sorted(_DENIED_SYSCALLS.values())),
        (jeq, "enosys", None, _CLONE3),
        (jeq, None, "allow", _CLONE),
        (ld, None, None, 16),  # clone's flags (low half of the first argument)
        (jset, "eperm", "allow", _CLONE_NEWUSER),
        "allow",
        (ret, None, None, allow),
        "kill",
        (ret, None, None, kill),
        "eperm",
        (ret, None, None, errno | 1),
        "enosys",
        (ret, None, None, errno | 38),
    ]
    labels: dict[str, int] = {}
    pc = 0
    for item in program:
        if isinstance(item, str):
            labels[item] = pc
        else:
            pc += 1
    out = bytearray()
    pc = 0
    for item in program:
        if isinstance(item, str):
            continue
        code, true, false, k = item
        jt = labels[true] - pc - 1 if true else 0
        jf = labels[false] - pc - 1 if false else 0
        out += struct.pack("<HBBI", code, jt, jf, k)
        pc += 1
    return bytes(out)


def _bwrap_command(
    config: SandboxConfig,
    runtime: _Runtime,
    *,
    as_root: bool,
    uid: int,
    packages: list[str],
    report_fd: int,
    memory_bytes: int,
    cpu_seconds: int,
    seccomp_fd: int | None = None,
) -> list[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": WORK_DIR,
        "TMPDIR": WORK_DIR,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
    }
    args = [config.bwrap]
    args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox"]
    if as_root:
        # Privileged bwrap: no user namespace (it would map the snippet to the host's root);
        # the boot code drops to ``uid`` with these two capabilities, then has none.
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user", "--disable-userns", "--uid", str(uid), "--gid", str(uid)]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--die-with-parent", "--new-session", "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(config.disk_mb * 1024 * 1024), "--tmpfs", WORK_DIR]
    args += ["--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", SHM_DIR]
    for target, link in runtime.symlinks:
        args += ["--symlink", target, link]
    for folder in runtime.folders:
        args += ["--perms", "0755", "--dir", folder]
    for host, dest in runtime.binds:
        args += ["--ro-bind", host, dest]
    for folder in runtime.hidden:  # the base interpreter's own site-packages: not importable
        args += ["--perms", "0555", "--size", "4096", "--tmpfs", folder]
    args += ["--remount-ro", "/", "--chdir", WORK_DIR]
    rlimits = [
        ["RLIMIT_AS", memory_bytes],
        ["RLIMIT_CPU", cpu_seconds],
        ["RLIMIT_FSIZE", config.disk_mb * 1024 * 1024],
        ["RLIMIT_NOFILE", 256],
        ["RLIMIT_CORE", 0],
    ]
    if as_root:  # the uid is this run's alone, so its process count is this run's
        rlimits.append(["RLIMIT_NPROC", config.max_processes])
    boot_args = {
        "rlimits": rlimits,
        "drop_to": uid if as_root else None,
        "site": SITE_DIR,
        "packages": packages,
        "fd": report_fd,
    }
    args += ["--", runtime.interpreter, "-I", "-S", "-B", "-u", "-c", _BOOT, json.dumps(boot_args)]
    return args


def _join(procs_files: list[str]):
    """A ``preexec_fn`` that moves the child into the run's cgroup before it runs bwrap."""

    def join() -> None:
        pid = str(os.getpid()).encode()
        for procs in procs_files:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    return join


def _unavailable(reason: str) -> RunResult:
    return RunResult(
        status=UNAVAILABLE,
        detail=f"Sandbox unavailable: {reason}. The check was not run.",
    )


def run_snippet(
    code: str,
    *,
    expected_output: str = "",
    packages: list[str] | tuple[str, ...] = (),
    time_limit: float = 10.0,
    memory_limit_mb: int = 512,
    max_output_bytes: int = 64_000,
    python: str = sys.executable,
    config: SandboxConfig | None = None,
) -> RunResult:
    """Run ``code`` in the sandbox, compare its stdout with ``expected_output``.

    ``packages`` are importable names the code needs; they are looked up inside the sandbox
    (never imported by the worker) and the run is "not run" when one is missing.

    Side effects: creates (and removes) a cgroup for the run; starts bwrap and, always, kills
    every process of the run before returning. Never raises for anything the snippet does.
    """
    config = config or current_config()
    if not os.path.exists(python):
        return RunResult(
            status=ERROR,
            detail=f"The sandboxed interpreter did not start: {python} does not exist.",
        )
    if not os.access(config.bwrap, os.X_OK):
        return _unavailable(f"bubblewrap is not installed at {config.bwrap}")
    memory_bytes = memory_limit_mb * 1024 * 1024
    try:
        runtime = _runtime(python, tuple(config.packages))
        cgroup = _Cgroup.create(config, memory_bytes=memory_bytes)
    except Unavailable as exc:
        return _unavailable(str(exc))

    try:
        result, report = _contained_run(
            code,
            config=config,
            runtime=runtime,
            cgroup=cgroup,
            packages=list(packages),
            time_limit=time_limit,
            memory_bytes=memory_bytes,
            max_output_bytes=max_output_bytes,
        )
        oom_kills = cgroup.oom_kills()
        result.peak_memory_bytes = cgroup.peak_memory()
    except OSError as exc:  # pipes, memfd or the fork itself: the run never started
        return _unavailable(f"bwrap could not be started in the run's cgroup ({exc})")
    finally:
        cgroup.remove()

    if report is None:  # the snippet never started: bwrap or the interpreter failed first
        message = (result.stderr.strip().splitlines() or [f"exit status {result.exit_code}"])[0]
        if not result.status and message.startswith("bwrap:"):
            return _unavailable(message)
        if not result.status:
            return _unavailable(f"the interpreter did not start in the sandbox: {message}")
        return result
    result.network_isolated = True
    result.sandbox_uid = report.get("uid")
    if report.get("missing"):
        return RunResult(
            status=NOT_RUN,
            detail="Not run: needs "
            + ", ".join(report["missing"])
            + ", not installed on this server.",
            network_isolated=True,
            sandbox_uid=result.sandbox_uid,
            duration=result.duration,
        )
    if not result.status:
        killed = result.detail
        result = _judge(result, expected_output, memory_limit_mb, oom_kills)
        if killed:
            result.detail = f"{result.detail} {killed}"
    elif oom_kills and result.status == ERROR:
        result.detail = f"Ran out of memory (limit {memory_limit_mb} MB). {result.detail}"
    return result


def _contained_run(
    code: str,
    *,
    config: SandboxConfig,
    runtime: _Runtime,
    cgroup: _Cgroup,
    packages: list[str],
    time_limit: float,
    memory_bytes: int,
    max_output_bytes: int,
) -> tuple[RunResult, dict | None]:
    """Start bwrap inside ``cgroup``, feed it the code, collect what it prints, kill it all."""
    as_root = os.geteuid() == 0
    uid = SANDBOX_UID_BASE + 1 + secrets.randbelow(1 << 20)
    keep: list[int] = []  # descriptors the child inherits; closed here once it started
    report_r, report_w = os.pipe()
    keep.append(report_w)
    program = seccomp_filter()
    seccomp_fd = None
    try:
        if program is not None:
            seccomp_fd = os.memfd_create("snippet-seccomp", 0)
            keep.append(seccomp_fd)
            os.write(seccomp_fd, program)
            os.lseek(seccomp_fd, 0, os.SEEK_SET)
        command = _bwrap_command(
            config,
            runtime,
            as_root=as_root,
            uid=uid,
            packages=packages,
            report_fd=report_w,
            memory_bytes=memory_bytes,
            cpu_seconds=int(time_limit) + 2,
            seccomp_fd=seccomp_fd,
        )
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                cwd="/",
                start_new_session=True,
                preexec_fn=_join(cgroup.procs_files),
                pass_fds=tuple(keep),
                close_fds=True,
            )
        except subprocess.SubprocessError as exc:  # joining the cgroup failed in the child
            raise OSError(str(exc)) from exc
        finally:
            for fd in keep:
                os.close(fd)
        try:
            result, report = _communicate(
                proc, code, time_limit, max_output_bytes, report_r, cgroup
            )
        finally:
            _kill(proc, cgroup)
        result.duration = round(time.monotonic() - started, 3)
        return result, report
    finally:
        os.close(report_r)


def _kill(proc: subprocess.Popen, cgroup: _Cgroup) -> None:
    """SIGKILL bwrap (its PID namespace dies with it), then whatever is left in the cgroup."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    cgroup.kill_all()
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is None:
            continue
        with contextlib.suppress(OSError):
            stream.close()


def _communicate(
    proc: subprocess.Popen,
    code: str,
    time_limit: float,
    cap: int,
    report_fd: int,
    cgroup: _Cgroup,
) -> tuple[RunResult, dict | None]:
    if proc.stdin is None or proc.stdout is None or proc.stderr is None:
        raise ValueError(
            "the snippet's process must be started with stdin, stdout and stderr pipes"
        )
    try:
        proc.stdin.write(code.encode())
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    out, err, report = bytearray(), bytearray(), bytearray()
    buffers = {proc.stdout.fileno(): out, proc.stderr.fileno(): err, report_fd: report}
    selector = selectors.DefaultSelector()
    for fd in buffers:
        selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + time_limit
    status, detail = None, ""
    exited_at = None
    while selector.get_map():
        remaining = deadline - time.monotonic()
        if exited_at is None and proc.poll() is not None:
            exited_at = time.monotonic()
        if exited_at is not None and time.monotonic() - exited_at > 0.3:
            left = len(cgroup.pids())
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
                selector.unregister(key.fd)
                continue
            buffers[key.fd].extend(chunk)
        if len(out) + len(err) > cap:
            status = ERROR
            detail = f"Stopped: printed more than {cap} bytes (output limit)."
            break
        if cgroup.oom_kills():  # one process was killed for memory: the whole run stops
            status = ERROR
            detail = "Every process was killed."
            break
    selector.close()
    if status is None:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            status = TIMED_OUT
            detail = f"Stopped after {time_limit:g} s (time limit); every process was killed."
    _kill(proc, cgroup)
    parsed = None
    if report:
        with contextlib.suppress(ValueError):
            parsed = json.loads(report.decode())
    exit_code = proc.returncode
    if exit_code is not None and 128 < exit_code <= 128 + 64:  # bwrap's way of saying "signal N"
        exit_code = 128 - exit_code
    result = RunResult(
        status=status or "",
        output=bytes(out[:cap]).decode(errors="replace"),
        stderr=bytes(err[:cap]).decode(errors="replace"),
        detail=detail,
        exit_code=exit_code,
    )
    return result, parsed


def _judge(result: RunResult, expected: str, memory_limit_mb: int, oom_kills: int) -> RunResult:
    code = result.exit_code
    if code == 0 and not oom_kills:
        if normalise(result.output) == normalise(expected):
            result.status = PASSED
            result.detail = "Output matches."
        else:
            result.status = FAILED
            result.diff = output_diff(expected, result.output)
            result.detail = "Output differs from the expected output."
        return result
    result.status = ERROR
    if oom_kills or "MemoryError" in result.stderr or code == -signal.SIGSEGV:
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

"""The README is part of the product: its promises are checked here."""

import re

from tests.support import ROOT


def test_readme_documents_every_environment_variable():
    settings_source = (ROOT / "platform" / "settings.py").read_text()
    names = set(re.findall(r"env\.\w+\(\s*\"([A-Z_]+)\"", settings_source))
    readme = (ROOT / "README.md").read_text()
    missing = sorted(name for name in names if f"`{name}`" not in readme)
    assert names  # the pattern still finds the settings
    assert missing == []


def test_readme_gives_the_two_commands_and_module_entry_points():
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme
    assert "make test" in readme
    for entry_point in (
        "python -m gunicorn platform.wsgi",
        "python -m celery -A platform worker",
        "python -m celery -A platform beat",
    ):
        assert entry_point in readme


def test_makefile_and_ci_never_call_bare_console_scripts():
    for path in (ROOT / "Makefile", ROOT / ".ci" / "run"):
        for line in path.read_text().splitlines():
            if line.strip().startswith("#"):
                continue
            assert not re.search(
                r"(^|[\s/])(celery|pytest|gunicorn)\s", line.replace("-m ", "-m_")
            ), line


def test_make_run_gives_every_process_a_site_url_from_host_and_port(tmp_path):
    """`make run PORT=…` mails links to the port it serves on: each process it starts sees
    SITE_URL. A stand-in interpreter prints what it was given instead of running it."""
    import shutil
    import subprocess

    make = shutil.which("make")
    assert make, "make is how the site is run: install it"
    fake_python = tmp_path / "python"
    # The stand-ins for the two long-running processes (web server, worker) linger: make stops
    # both as soon as either exits, which would otherwise race the other's print.
    fake_python.write_text(
        '#!/bin/sh\necho "SITE_URL=$SITE_URL $1 $2"\n'
        'case "$1 $2" in "manage.py runserver"|"manage.py supervise_worker") sleep 2;; esac\n'
        "exit 0\n"
    )
    fake_python.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [make, "-s", "-o", ".venv/.installed", "run", f"PY={fake_python}", "PORT=9123"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    started = [line for line in result.stdout.splitlines() if line.startswith("SITE_URL=")]
    assert "SITE_URL=http://127.0.0.1:9123 manage.py migrate" in started
    assert "SITE_URL=http://127.0.0.1:9123 manage.py runserver" in started
    assert "SITE_URL=http://127.0.0.1:9123 manage.py supervise_worker" in started
    assert all(line.startswith("SITE_URL=http://127.0.0.1:9123 ") for line in started)

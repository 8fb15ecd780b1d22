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

"""The `platform` package must stand in for the standard library module of the same name."""

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

import platform
from tests.support import ROOT


def test_platform_shim_forwards_stdlib_functions():
    assert platform.system() == "Linux"
    assert platform.python_version().startswith("3.11")
    assert platform.uname().system == "Linux"
    assert Path(platform.__file__).parent == ROOT / "platform"


def test_platform_shim_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError):
        platform.no_such_function_anywhere  # noqa: B018


def test_platform_shim_lets_redis_import_from_repository_root():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import platform, redis; print(platform.__file__, redis.__version__)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.startswith(str(ROOT / "platform" / "__init__.py"))


@pytest.mark.django_db
def test_platform_shim_sqlite_backend_runs_queries():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 + 1")
        assert cursor.fetchone() == (2,)


def test_platform_shim_sqlite_backend_in_fresh_process(tmp_path):
    code = (
        "import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'platform.settings'; "
        "django.setup(); from django.db import connections; "
        "c = connections.create_connection('default'); cur = c.cursor(); "
        "cur.execute('select sqlite_version()'); print('sqlite', cur.fetchone()[0])"
    )
    env = {"PATH": "/usr/bin:/bin", "VAR_DIR": str(tmp_path), "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("sqlite 3.")


def test_platform_submodules_do_not_shadow_stdlib_api():
    stdlib = platform._load_stdlib_platform()
    api = {name for name in dir(stdlib) if not name.startswith("_")}
    ours = {info.name for info in pkgutil.iter_modules([str(ROOT / "platform")])}
    assert ours & api == set()


def test_platform_celery_app_is_reachable_as_attribute():
    module = importlib.import_module("platform")
    assert module.celery.app.main == "fromscratch"

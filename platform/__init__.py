"""The From Scratch site package.

The product owner named this package ``platform``, which is also a standard library module.
Anything started from the repository root imports this package instead of the standard one, and
third-party code (redis-py, Django's SQLite backend, kombu …) calls ``platform.system()`` and
friends. PEP 562 lets a module answer unknown attribute lookups: every name this package does not
define is forwarded to the real standard library module, loaded once from the stdlib directory.
"""

from __future__ import annotations

import importlib.util
import sysconfig
from pathlib import Path
from types import ModuleType

_stdlib_platform: ModuleType | None = None


def _load_stdlib_platform() -> ModuleType:
    global _stdlib_platform
    if _stdlib_platform is None:
        path = Path(sysconfig.get_path("stdlib")) / "platform.py"
        spec = importlib.util.spec_from_file_location("_stdlib_platform", path)
        if spec is None or spec.loader is None:  # pragma: no cover - broken Python install
            raise ImportError(f"cannot load the standard library platform module from {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _stdlib_platform = module
    return _stdlib_platform


def __getattr__(name: str):
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    if name == "celery":
        # `python -m celery -A platform` looks for `platform.celery`; load it on demand so that
        # importing this package (which redis and sqlite do) never drags Celery in.
        return importlib.import_module(".celery", __name__)
    return getattr(_load_stdlib_platform(), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(dir(_load_stdlib_platform())))

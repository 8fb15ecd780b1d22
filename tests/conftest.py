"""Root conftest: only loads the shared fixtures from tests/support/ (import helpers from there)."""

pytest_plugins = [
    "tests.support.cache",
    "tests.support.hashing",
    "tests.support.users",
    "tests.support.celery_worker",
    "tests.support.browser",
]

"""Password hashing for tests: still Argon2, at the smallest cost.

Production hashes cost about 0.1 s of CPU each (Django's Argon2 defaults: 100 MiB, two passes),
which is the point there; the suite creates a user with a password in hundreds of tests.
The algorithm and hash format stay Argon2, so tests of hashing still see what production does.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import Argon2PasswordHasher
from django.test import override_settings


class FastArgon2PasswordHasher(Argon2PasswordHasher):
    time_cost = 1
    memory_cost = 8  # KiB, Argon2's minimum for one lane
    parallelism = 1


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    from django.conf import settings

    hashers = [f"{__name__}.FastArgon2PasswordHasher", *settings.PASSWORD_HASHERS]
    with override_settings(PASSWORD_HASHERS=hashers):
        yield

"""Every test starts with an empty cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clear_cache():
    """Rate limits and rendered fragments live in the cache: start every test without them."""
    from django.core.cache import cache

    cache.clear()
    yield

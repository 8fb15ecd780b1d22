"""One way to wait for something another process does: poll a predicate until it holds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 30.0,
    interval: float = 0.1,
    message: str | Callable[[], str] = "",
) -> T:
    """Call ``predicate`` every ``interval`` seconds until it returns something truthy; return it.

    After ``timeout`` seconds fail the test with an AssertionError naming what was awaited:
    ``message`` is a string, or a callable evaluated only then (a worker's log, current counts).
    An exception raised by the predicate (a worker that died) propagates at once.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            detail = message() if callable(message) else message
            name = getattr(predicate, "__name__", "condition")
            raise AssertionError(
                f"{name} still false after {timeout}s" + (f": {detail}" if detail else "")
            )
        time.sleep(interval)

"""The widget benchmark's baseline: the site with the widgets' numpy work taken out.

``without_computation`` wraps each registered widget's ``numbers`` so that it computes once per
process for each distinct input and then hands back the same arrays. Everything else of a request
stays: middleware, form validation, the tables and SVG built from those numbers, the template and
the cache headers. ``application()`` applies that to the registry and returns the WSGI app, for

    python -m gunicorn "bench.widgets_baseline:application()"

served side by side with ``platform.wsgi`` by bench/widgets.py. Importing this module changes
nothing; only ``application()`` patches the registry, in the process that serves the baseline.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


def computed_once(numbers: Callable[[dict], dict]) -> Callable[[dict], dict]:
    """``numbers`` remembered per distinct cleaned input (a benchmark repeats a few inputs)."""
    seen: dict[str, dict] = {}

    def remembered(data: dict) -> dict:
        key = repr(sorted(data.items()))
        if key not in seen:
            seen[key] = numbers(data)
        return seen[key]

    return remembered


def without_computation(widgets: dict[str, Any]) -> dict[str, Any]:
    """A copy of the registry whose widgets compute their numbers once per input."""
    return {
        key: dataclasses.replace(w, numbers=computed_once(w.numbers)) for key, w in widgets.items()
    }


def application():
    """The WSGI app with every widget's numbers computed once per process and input."""
    from courses.widgets.registry import WIDGETS
    from platform.wsgi import application as app  # sets Django up, as gunicorn would

    WIDGETS.update(without_computation(WIDGETS))
    return app

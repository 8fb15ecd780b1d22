"""axe-core in a Playwright page: which serious or critical accessibility rules a page breaks.

axe-core comes from npm into ``tools/node/`` (``npm ci`` there; ``.ci/run`` does it). Without it
the tests that need it skip, with the reason, except under ``CI=true``, where they fail.

    from tests.support.axe import axe_violations
    page.goto("/courses/")
    assert axe_violations(page) == []
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

AXE_JS = Path(__file__).resolve().parents[2] / "tools/node/node_modules/axe-core/axe.min.js"
SERIOUS = ("serious", "critical")


def require_axe() -> Path:
    """The path of axe.min.js; skips the test (fails it in CI) when npm has not installed it."""
    if not AXE_JS.exists():
        message = f"{AXE_JS} missing: run `npm ci` in tools/node"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return AXE_JS


def axe_violations(page, *, impacts: tuple[str, ...] = SERIOUS) -> list[str]:
    """Run axe-core (WCAG 2.x A and AA rules and best practices) on the page as it is now.

    Returns one line per violation of the given impacts: rule id, impact, and the first few
    offending elements, so an assertion failure says what to fix.
    """
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Not page.add_script_tag: it inlines the file, which the site's CSP (script-src 'self')
        # refuses. Evaluating through the DevTools protocol is not subject to the page's CSP.
        page.evaluate(require_axe().read_text(encoding="utf-8") + "\n;undefined")
    results = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({
                id: v.id, impact: v.impact,
                targets: v.nodes.slice(0, 3).map(n => n.target.join(' ')),
            }));
        }"""
    )
    return [
        f"{v['id']} ({v['impact']}): {', '.join(v['targets'])}"
        for v in results
        if v["impact"] in impacts
    ]

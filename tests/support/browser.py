"""A real browser: Debian's Chromium driven by Playwright, one per session, a page per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="session")
def chromium():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run must install Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs an event loop
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


class PageWatch:
    """Records what a page did: every request, and what went wrong (console errors, failed,
    foreign or error responses)."""

    def __init__(self, page, origin: str) -> None:
        self.page = page
        self.origin = origin
        self.requests: list[str] = []
        self.console_errors: list[str] = []
        self.failed_requests: list[str] = []
        self.foreign_requests: list[str] = []
        self.bad_responses: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.console_errors.append(f"pageerror: {exc}"))
        page.on("requestfailed", lambda req: self.failed_requests.append(req.url))
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        self.allowed_statuses: set[int] = set()

    def _on_console(self, msg) -> None:
        if msg.type == "error":
            self.console_errors.append(msg.text)

    def _on_request(self, req) -> None:
        self.requests.append(req.url)
        if not req.url.startswith((self.origin, "data:", "about:", "blob:")):
            self.foreign_requests.append(req.url)

    def _on_response(self, resp) -> None:
        if resp.status >= 400 and resp.status not in self.allowed_statuses:
            self.bad_responses.append(f"{resp.status} {resp.url}")

    def assert_clean(self) -> None:
        assert self.console_errors == []
        assert self.failed_requests == []
        assert self.foreign_requests == []
        assert self.bad_responses == []


def _screenshot(pg, request) -> None:
    out = settings.VAR_DIR / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(out / f"{request.node.name}.png"), full_page=True)


@pytest.fixture
def page(chromium, live_server, request):
    """A fresh browser page on the live server; a screenshot is kept under var/test/screenshots."""
    context = chromium.new_context(
        base_url=live_server.url, viewport={"width": 1200, "height": 900}
    )
    pg = context.new_page()
    pg.set_default_timeout(15000)
    pg.watch = PageWatch(pg, live_server.url)
    yield pg
    try:
        _screenshot(pg, request)
    finally:
        context.close()


@pytest.fixture
def no_js_page(chromium, live_server, request):
    context = chromium.new_context(base_url=live_server.url, java_script_enabled=False)
    pg = context.new_page()
    pg.set_default_timeout(15000)
    yield pg
    try:
        _screenshot(pg, request)
    finally:
        context.close()

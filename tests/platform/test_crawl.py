"""Walk the whole demo site as a visitor and as a learner: no page answers with a 5xx.

Every same-site link found from the home page is followed (GET only), and each page is asked
again with hostile query parameters; bad input must get a 4xx or be ignored, never a 500.
"""

from __future__ import annotations

import re
from collections import deque
from urllib.parse import urldefrag, urlsplit

import pytest
from django.core.management import call_command

HREF = re.compile(r'href="([^"]+)"')
HOSTILE = "page=99999999&topic=%00&kind=<script>&q=%27%22%3Cscript%3E&tokens=1e309&steps=-1"
SKIP_PREFIXES = ("/admin/", "/accounts/logout/", "/static/", "/account/delete/")


def crawl(client, limit: int = 400) -> dict[str, int]:
    seen: dict[str, int] = {}
    queue = deque(["/"])
    while queue and len(seen) < limit:
        path = queue.popleft()
        if path in seen:
            continue
        response = client.get(path)
        seen[path] = response.status_code
        content_type = response.get("Content-Type", "")
        if response.status_code != 200 or not content_type.startswith("text/html"):
            continue
        for href in HREF.findall(response.content.decode()):
            url, _ = urldefrag(href.replace("&amp;", "&"))
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not url.startswith("/"):
                continue
            if url.startswith(SKIP_PREFIXES) or url in seen:
                continue
            queue.append(url)
    return seen


@pytest.fixture
def demo_site(db):
    call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115


@pytest.mark.slow
def test_crawl_as_visitor_finds_no_server_error(client, demo_site):
    seen = crawl(client)
    assert len(seen) > 40  # the demo content really was walked
    errors = {path: status for path, status in seen.items() if status >= 500}
    assert errors == {}
    hostile = {}
    for path in list(seen)[:150]:
        joiner = "&" if "?" in path else "?"
        status = client.get(f"{path}{joiner}{HOSTILE}").status_code
        if status >= 500:
            hostile[path] = status
    assert hostile == {}


@pytest.mark.slow
def test_crawl_as_learner_finds_no_server_error(learner_client, demo_site):
    seen = crawl(learner_client, limit=200)
    assert "/courses/dashboard/" in seen
    errors = {path: status for path, status in seen.items() if status >= 500}
    assert errors == {}

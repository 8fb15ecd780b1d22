"""Newsletter sends in tests: fast timings, the worker's mail settings, waiting for an issue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from newsletter.models import Issue
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from tests.newsletter.smtp import SmtpServer
    from tests.support.celery_worker import Worker

# Small numbers so that retries, leases and the sweeper act within seconds in tests. The
# visibility timeout must stay ≥ 3 × the chunk time limit (checked at settings import).
FAST = {
    "NEWSLETTER_CHUNK_SIZE": "50",
    "NEWSLETTER_CHUNK_TIME_LIMIT": "5",
    "NEWSLETTER_RETRY_BACKOFF": "1",
    "NEWSLETTER_RETRY_MAX_DELAY": "2",
    "NEWSLETTER_STALE_AFTER": "3",
    "NEWSLETTER_SWEEP_INTERVAL": "2",
    "CELERY_VISIBILITY_TIMEOUT": "15",
}


def sending_env(smtp_server: SmtpServer, **extra: str) -> dict[str, str]:
    """What a sending worker gets on top of ``worker_env``: fast timings and the SMTP server."""
    return {**FAST, "EMAIL_URL": smtp_server.url, **extra}


def wait_for_status(
    issue: Issue, statuses: set[str], timeout: float, worker: Worker | None = None
) -> Issue:
    def reached() -> bool:
        issue.refresh_from_db()
        return issue.status in statuses

    wait_until(
        reached,
        timeout=timeout,
        interval=0.2,
        message=lambda: (
            f"issue still {issue.status}: {issue.delivery_counts()}\n"
            + (worker.log() if worker is not None else "")
        ),
    )
    return issue

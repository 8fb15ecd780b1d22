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


def fast_sweeper(every: int = 2) -> None:
    """Make beat's sweeper run every ``every`` seconds. Migration 0002 already wrote it with
    NEWSLETTER_SWEEP_INTERVAL (60 s), and ``ensure_periodic_tasks`` keeps an existing task as
    an editor left it, so the interval is changed here. Call before the worker starts."""
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    from newsletter.services import schedule

    schedule.ensure_periodic_tasks(sweep_every=every)
    interval, _ = IntervalSchedule.objects.get_or_create(every=every, period="seconds")
    PeriodicTask.objects.filter(name=schedule.SWEEP_TASK_NAME).update(interval=interval)

"""Celery tasks: thin wrappers that take ids, call the service and log.

All tasks run with the global ``acks_late`` and ``task_reject_on_worker_lost``: a chunk whose
worker dies is handed out again by the broker (and, if the broker lost it, by the sweeper).
The sending services never import this module; they are handed :func:`queue_chunk`.
"""

from __future__ import annotations

import contextlib
import logging

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from .models import Issue
from .services import sending

log = logging.getLogger(__name__)

# A chunk that loses the database retries after 1, 2, 4, 5, 5, … seconds, 30 times at most
# (about 2.5 minutes); after that it fails and the sweeper hands its rows out again.
DB_RETRY_BASE = 1
DB_RETRY_MAX = 5
DB_RETRY_LIMIT = 30


def queue_chunk(issue_id: int, first_id: int, last_id: int, *, countdown: int = 0) -> None:
    """Publish one ``send_chunk`` message: how the sending services hand out work."""
    if countdown:
        send_chunk.apply_async((issue_id, first_id, last_id), countdown=countdown)
    else:
        send_chunk.apply_async((issue_id, first_id, last_id))


@shared_task(
    bind=True,
    # The service stops itself after NEWSLETTER_CHUNK_TIME_LIMIT; these are only backstops.
    soft_time_limit=settings.NEWSLETTER_CHUNK_TIME_LIMIT * 3 // 2,
    time_limit=settings.NEWSLETTER_CHUNK_TIME_LIMIT * 2,
)
def send_chunk(self, issue_id: int, first_id: int, last_id: int) -> None:
    try:
        result = sending.send_chunk(
            issue_id=issue_id,
            first_id=first_id,
            last_id=last_id,
            owner=self.request.id or "",
            queue_chunk=queue_chunk,
        )
    except (OperationalError, InterfaceError) as exc:
        # The database went away (PostgreSQL restarted): drop the dead connection and try the
        # chunk again shortly, under the same task id, so it takes its leased rows straight
        # back. Rows marked before the failure stay sent; the one in flight may be sent twice.
        with contextlib.suppress(Exception):
            connection.close()
        countdown = min(DB_RETRY_BASE * 2**self.request.retries, DB_RETRY_MAX)
        log.warning(
            "issue %s chunk %s-%s: database unavailable (%s); retry %s in %s s",
            issue_id,
            first_id,
            last_id,
            exc,
            self.request.retries + 1,
            countdown,
        )
        raise self.retry(exc=exc, countdown=countdown, max_retries=DB_RETRY_LIMIT) from exc
    log.info(
        "issue %s chunk %s-%s: %s sent, %s deferred, %s failed, %s skipped, %s left for later",
        issue_id,
        first_id,
        last_id,
        result.sent,
        result.deferred,
        result.failed,
        result.skipped,
        result.released,
    )


@shared_task
def send_issue(issue_id: int) -> None:
    created = sending.start_send(issue_id=issue_id, queue_chunk=queue_chunk)
    log.info("issue %s: %s deliveries frozen", issue_id, created)


@shared_task
def send_due_issues() -> None:
    started = sending.send_due_issues(queue_chunk=queue_chunk)
    if started:
        log.info("started scheduled issues %s", started)


@shared_task
def sweep() -> None:
    try:
        requeued = sending.sweep(queue_chunk=queue_chunk)
    except (OperationalError, InterfaceError) as exc:
        # The database is away; the next run (NEWSLETTER_SWEEP_INTERVAL) tries again.
        with contextlib.suppress(Exception):
            connection.close()
        log.warning("sweep skipped: database unavailable (%s)", exc)
        return
    sending_now = Issue.objects.filter(status=Issue.Status.SENDING).count()
    if requeued or sending_now:
        log.info("sweep: %s issue(s) sending, re-queued %s", sending_now, requeued)

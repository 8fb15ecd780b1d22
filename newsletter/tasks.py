"""Celery tasks: thin wrappers that take ids, call the service and log.

All tasks run with the global ``acks_late`` and ``task_reject_on_worker_lost``: a chunk whose
worker dies is handed out again by the broker (and, if the broker lost it, by the sweeper).
The sending services never import this module; they are handed :func:`queue_chunk`.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from .models import Issue
from .services import sending

log = logging.getLogger(__name__)


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
    result = sending.send_chunk(
        issue_id=issue_id,
        first_id=first_id,
        last_id=last_id,
        owner=self.request.id or "",
        queue_chunk=queue_chunk,
    )
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
    requeued = sending.sweep(queue_chunk=queue_chunk)
    sending_now = Issue.objects.filter(status=Issue.Status.SENDING).count()
    if requeued or sending_now:
        log.info("sweep: %s issue(s) sending, re-queued %s", sending_now, requeued)

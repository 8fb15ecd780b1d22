"""Celery tasks: thin wrappers that take ids, call the service and log.

All tasks run with the global ``acks_late`` and ``task_reject_on_worker_lost``: a chunk whose
worker dies is handed out again by the broker (and, if the broker lost it, by the sweeper).
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from . import services
from .models import Issue

log = logging.getLogger(__name__)


@shared_task(
    bind=True,
    # The service stops itself after NEWSLETTER_CHUNK_TIME_LIMIT; these are only backstops.
    soft_time_limit=settings.NEWSLETTER_CHUNK_TIME_LIMIT * 3 // 2,
    time_limit=settings.NEWSLETTER_CHUNK_TIME_LIMIT * 2,
)
def send_chunk(self, issue_id: int, first_id: int, last_id: int) -> None:
    result = services.send_chunk(
        issue_id=issue_id, first_id=first_id, last_id=last_id, owner=self.request.id or ""
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
    created = services.start_send(issue_id=issue_id)
    log.info("issue %s: %s deliveries frozen", issue_id, created)


@shared_task
def send_due_issues() -> None:
    started = services.send_due_issues()
    if started:
        log.info("started scheduled issues %s", started)


@shared_task
def sweep() -> None:
    requeued = services.sweep()
    sending = Issue.objects.filter(status=Issue.Status.SENDING).count()
    if requeued or sending:
        log.info("sweep: %s issue(s) sending, re-queued %s", sending, requeued)

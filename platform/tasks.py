"""Site-wide Celery tasks."""

import logging
import socket

from celery import shared_task

log = logging.getLogger(__name__)


@shared_task(ignore_result=False)
def ping(token: str = "") -> dict:
    """Answer from a worker: used to check that queued work really runs.

    ``python -m celery -A platform call platform.tasks.ping`` from any machine.
    """
    log.info("ping %s", token)
    return {"token": token, "worker": socket.gethostname()}

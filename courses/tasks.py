"""Celery tasks of the courses app: thin wrappers around services."""

import logging

from celery import shared_task

from . import services
from .models import CodeListing

log = logging.getLogger(__name__)


@shared_task
def check_listing(listing_id: int) -> None:
    listing = CodeListing.objects.filter(pk=listing_id).first()
    if listing is None:
        log.info("listing %s is gone; nothing to check", listing_id)
        return
    services.check_listing(listing=listing)


@shared_task
def send_review_reminders() -> int:
    """Daily (beat): mail the learners who opted in and have cards due."""
    sent = services.send_review_reminders()
    log.info("review reminders sent: %s", sent)
    return sent

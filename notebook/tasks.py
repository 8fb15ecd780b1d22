"""Celery tasks: ids in, fetch, call notebook.services, log."""

from __future__ import annotations

import logging

from celery import shared_task

from . import services
from .models import Note, SnippetCheck

log = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def run_note_checks(note_id: int) -> None:
    note = Note.objects.filter(pk=note_id).first()
    if note is None:
        log.warning("run_note_checks: note %s no longer exists", note_id)
        return
    runs = services.run_note_checks(note=note)
    log.info("note %s: %s", note.slug, ", ".join(run.status for run in runs) or "no checks")


@shared_task(ignore_result=True)
def run_check(check_id: int) -> None:
    check = SnippetCheck.objects.select_related("note").filter(pk=check_id).first()
    if check is None:
        log.warning("run_check: check %s no longer exists", check_id)
        return
    run = services.run_check(check=check)
    log.info("check %s of %s: %s", check.name, check.note.slug, run.status)

"""Notebook workflows with side effects: running snippet checks and queuing them."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import runner
from .models import Note, SnippetCheck, SnippetRun

log = logging.getLogger(__name__)


def run_check(
    *,
    check: SnippetCheck,
    time_limit: float | None = None,
    memory_limit_mb: int | None = None,
) -> SnippetRun:
    """Run one check in the sandbox and keep the run.

    Side effects: starts a contained child process (notebook/runner.py); creates a SnippetRun;
    points ``check.latest_run`` at it and stores the check's current code hash (so Verified
    reflects this run). Never raises for anything the snippet does.
    """
    code_hash = check.compute_code_hash()
    started_at = timezone.now()
    result = runner.run_snippet(
        check.code,
        expected_output=check.expected_output,
        packages=check.package_list,
        time_limit=time_limit if time_limit is not None else settings.SNIPPET_TIME_LIMIT,
        memory_limit_mb=memory_limit_mb or settings.SNIPPET_MEMORY_LIMIT_MB,
        max_output_bytes=settings.SNIPPET_MAX_OUTPUT_BYTES,
    )
    with transaction.atomic():
        run = SnippetRun.objects.create(
            snippet_check=check,
            status=result.status,
            output=result.combined_output,
            diff=result.diff,
            detail=result.detail,
            exit_code=result.exit_code,
            duration=result.duration,
            network_isolated=result.network_isolated,
            code_hash=code_hash,
            started_at=started_at,
        )
        SnippetCheck.objects.filter(pk=check.pk).update(latest_run=run, code_hash=code_hash)
    check.latest_run, check.code_hash = run, code_hash
    log.info("snippet check %s (%s): %s in %.2fs", check.pk, check, run.status, run.duration)
    return run


def run_note_checks(*, note: Note, time_limit: float | None = None) -> list[SnippetRun]:
    """Run every check of ``note`` one after the other.

    Side effects: those of :func:`run_check`, once per check.
    """
    return [
        run_check(check=check, time_limit=time_limit)
        for check in note.checks.select_related("latest_run")
    ]


def queue_note_checks(*, notes: Iterable[Note]) -> int:
    """Queue one Celery task per note that has checks, sent when the transaction commits.

    Side effects: after commit, one ``notebook.tasks.run_note_checks`` message per note.
    Returns how many notes were queued.
    """
    from .tasks import run_note_checks as task

    queued = 0
    for note in notes:
        if note.checks.exists():
            task.delay_on_commit(note.pk)  # type: ignore[attr-defined]  # a DjangoTask
            queued += 1
    return queued


def check_code_saved(*, check: SnippetCheck) -> bool:
    """React to a saved check: queue a run if its code (or expected output) changed.

    Compares the saved hash with the hash of what is now stored. Side effects when they differ:
    stores the new hash and, after commit, queues ``notebook.tasks.run_check``. Returns whether
    a run was queued.
    """
    from .tasks import run_check as task

    new_hash = check.compute_code_hash()
    if new_hash == check.code_hash:
        return False
    SnippetCheck.objects.filter(pk=check.pk).update(code_hash=new_hash)
    check.code_hash = new_hash
    task.delay_on_commit(check.pk)  # type: ignore[attr-defined]  # a DjangoTask
    return True

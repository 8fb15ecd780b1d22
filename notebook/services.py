"""Notebook workflows with side effects: running snippet checks, noticing changed code.

Nothing here queues a task (``notebook.tasks`` imports this module, not the other way round):
the admin action and the post-save signal queue ``notebook.tasks`` themselves.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from platform import sandbox

from .models import Note, SnippetCheck, SnippetRun

log = logging.getLogger(__name__)


def run_check(
    *,
    check: SnippetCheck,
    time_limit: float | None = None,
    memory_limit_mb: int | None = None,
) -> SnippetRun:
    """Run one check in the sandbox and keep the run.

    Side effects: runs the code in the bubblewrap sandbox (platform/sandbox.py); creates a
    SnippetRun; points ``check.latest_run`` at it and stores the check's current code hash (so
    Verified reflects this run). Never raises for anything the snippet does.
    """
    code_hash = check.compute_code_hash()
    started_at = timezone.now()
    result = sandbox.run_snippet(
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


def store_code_hash(*, check: SnippetCheck) -> bool:
    """Notice whether a saved check's code, expected output or packages changed.

    Compares the stored hash with the hash of what is now saved. Side effects when they differ:
    stores the new hash (so the check is no longer Verified until it runs again). Returns
    whether they differed, i.e. whether the check needs a fresh run.
    """
    new_hash = check.compute_code_hash()
    if new_hash == check.code_hash:
        return False
    SnippetCheck.objects.filter(pk=check.pk).update(code_hash=new_hash)
    check.code_hash = new_hash
    return True

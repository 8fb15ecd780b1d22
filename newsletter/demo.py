"""Demo content for the newsletter (idempotent): the beat schedule and the archived letters.

Each letter is a content file under ``newsletter/content/`` (TOML front matter with the subject
and how many days ago it was sent, then the Markdown body), in the format of
``platform/frontmatter.py``.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from platform.frontmatter import ContentError, read_markdown, require

from .models import Issue
from .services import schedule

CONTENT_DIR = Path(__file__).resolve().parent / "content"


def load(directory: Path = CONTENT_DIR) -> str:
    """Side effects: creates or updates the beat schedule; creates each archived letter that is
    not there yet (matched by subject). Raises ContentError for a malformed file."""
    beat = schedule.ensure_periodic_tasks()
    created = 0
    files = sorted(directory.glob("*.md"))
    for path in files:
        meta, body = read_markdown(path)
        subject = require(path, meta, "subject", str)
        days = require(path, meta, "sent_days_ago", int)
        if days < 0:
            raise ContentError(path, "'sent_days_ago' cannot be negative", key="sent_days_ago")
        sent = timezone.now() - timedelta(days=days)
        _issue, new = Issue.objects.get_or_create(
            subject=subject,
            defaults={
                "body": body + "\n",
                "status": Issue.Status.SENT,
                "send_at": sent,
                "started_at": sent,
                "finished_at": sent,
            },
        )
        created += new
    return f"beat schedule: {beat}; {len(files)} archived letter(s), {created} created"

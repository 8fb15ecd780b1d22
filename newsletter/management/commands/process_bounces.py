"""``manage.py process_bounces PATH``: apply the delivery status notifications in a mailbox.

For sites that send through plain SMTP: point the bounce address's mailbox (a Maildir folder
or an mbox file) at this command, e.g. from cron. Each RFC 3464 report (multipart/report;
report-type=delivery-status) is read with the standard ``mailbox`` and ``email`` modules; per
recipient, Status 5.x.x (Action: failed) is a hard bounce and 4.x.x (or Action: delayed) a soft
one, with the rules of ``newsletter.services.bounces``. Reports are keyed by their Message-ID
and recipient, so reading the same mailbox again changes nothing.
"""

from __future__ import annotations

import email
import email.utils
import hashlib
import mailbox
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from newsletter.services import bounces


@dataclass(frozen=True)
class RecipientReport:
    recipient: str
    kind: str  # bounces.Kind.HARD or SOFT
    description: str


def open_mailbox(path: Path) -> mailbox.Mailbox:
    if path.is_dir():
        if not (path / "cur").is_dir() or not (path / "new").is_dir():
            raise CommandError(f"{path} is a folder but not a Maildir (no cur/ and new/)")
        return mailbox.Maildir(path, factory=None, create=False)
    if path.is_file():
        return mailbox.mbox(path, factory=None, create=False)
    raise CommandError(f"{path} does not exist")


def delivery_status_part(message: Message) -> Message | None:
    """The message/delivery-status part of a multipart/report, or None."""
    if message.get_content_type() != "multipart/report":
        return None
    if str(message.get_param("report-type") or "").lower() != "delivery-status":
        return None
    for part in message.walk():
        if part.get_content_type() == "message/delivery-status":
            return part
    return None


def _address(field: str | None) -> str:
    """'rfc822; someone@example.com' → 'someone@example.com'."""
    if not field:
        return ""
    kind, _, value = field.partition(";")
    address = value if value else kind
    return address.strip().strip("<>").strip()


def recipient_reports(part: Message) -> Iterator[RecipientReport]:
    """Per-recipient blocks of a message/delivery-status part that report a failure."""
    blocks = part.get_payload()
    if not isinstance(blocks, list) or len(blocks) < 2:
        raise ValueError("the delivery-status part has no per-recipient fields")
    for block in blocks[1:]:  # the first block is about the whole message
        if not isinstance(block, Message):
            raise ValueError("a delivery-status block is not a header block")
        recipient = _address(block.get("Final-Recipient") or block.get("Original-Recipient"))
        action = (block.get("Action") or "").strip().lower()
        status = (block.get("Status") or "").strip()
        cls = bounces.status_class(status)
        if not recipient or "@" not in recipient:
            continue
        if action == "failed" and cls == "5":
            kind = bounces.Kind.HARD
        elif cls == "4" or action == "delayed":
            kind = bounces.Kind.SOFT
        else:
            continue  # delivered, relayed, expanded: nothing to do
        diagnostic = " ".join((block.get("Diagnostic-Code") or "").split())
        yield RecipientReport(
            recipient, kind, f"{action or 'unknown'} {status} {diagnostic}".strip()
        )


def _date(message: Message) -> datetime | None:
    try:
        return email.utils.parsedate_to_datetime(message["Date"]) if message["Date"] else None
    except (TypeError, ValueError, IndexError):
        return None


class Command(BaseCommand):
    help = "Apply the bounce reports (RFC 3464 DSNs) in a Maildir folder or mbox file."

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path, help="a Maildir folder or an mbox file")

    def handle(self, *args, path: Path, **options) -> None:
        box = open_mailbox(path)
        tally: Counter[str] = Counter()
        messages = 0
        for key in box.iterkeys():
            messages += 1
            try:
                raw = box.get_bytes(key)
                message = email.message_from_bytes(raw)
                part = delivery_status_part(message)
                if part is None:
                    tally["not a delivery report"] += 1
                    continue
                reports = list(recipient_reports(part))
            except Exception as exc:  # one bad message must not stop the rest
                tally["malformed"] += 1
                self.stderr.write(f"message {key}: unreadable report ({type(exc).__name__})")
                continue
            if not reports:
                tally["no failure reported"] += 1
                continue
            ident = (message.get("Message-ID") or "").strip()
            if not ident:
                ident = "sha256:" + hashlib.sha256(raw).hexdigest()
            for report in reports:
                outcome = bounces.record_report(
                    key=f"dsn:{ident}:{report.recipient.lower()}",
                    kind=report.kind,
                    recipient=report.recipient,
                    description=report.description,
                    event="bounced" if report.kind == bounces.Kind.HARD else "deferred",
                    occurred_at=_date(message),
                )
                tally[f"{report.kind} bounce: {outcome}"] += 1
        summary = ", ".join(f"{count} {what}" for what, count in sorted(tally.items()))
        self.stdout.write(f"{messages} messages read from {path}: {summary or 'nothing to do'}")

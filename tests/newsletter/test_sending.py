"""Sending in this process through a real SMTP server: messages, headers, resume after a crash."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from newsletter.models import Delivery, Issue, Subscriber
from newsletter.services import schedule, sending
from tests.newsletter.factories import IssueFactory, SubscriberFactory, confirmed_subscribers

pytestmark = pytest.mark.django_db


class ChunkQueue(list):
    """Stands in for ``newsletter.tasks.queue_chunk``: keeps (issue, first, last, countdown)."""

    def __call__(self, issue_id: int, first_id: int, last_id: int, *, countdown: int = 0) -> None:
        self.append((issue_id, first_id, last_id, countdown))


def _send_all(
    issue: Issue, owner: str = "test", queue: ChunkQueue | None = None
) -> sending.ChunkResult:
    """Run the chunk service over the whole issue in this process (no broker involved)."""
    ids = list(issue.deliveries.values_list("id", flat=True))
    return sending.send_chunk(
        issue_id=issue.pk, first_id=min(ids), last_id=max(ids), owner=owner, queue_chunk=queue
    )


def _id_range(issue: Issue) -> tuple[int, int]:
    ids = list(issue.deliveries.values_list("id", flat=True))
    return min(ids), max(ids)


def test_start_send_queues_chunks_of_chunk_size_after_commit(
    db, settings, django_capture_on_commit_callbacks
):
    settings.NEWSLETTER_CHUNK_SIZE = 2
    confirmed_subscribers(5)
    issue = IssueFactory()
    queue = ChunkQueue()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert sending.start_send(issue_id=issue.pk, queue_chunk=queue) == 5
        assert queue == []  # nothing reaches the broker before the rows are committed
    assert len(callbacks) == 1
    ids = list(issue.deliveries.order_by("id").values_list("id", flat=True))
    assert queue == [
        (issue.pk, ids[0], ids[1], 0),
        (issue.pk, ids[2], ids[3], 0),
        (issue.pk, ids[4], ids[4], 0),
    ]


def test_dispatch_with_the_broker_down_queues_what_it_can_and_raises_nothing(db, settings):
    settings.NEWSLETTER_CHUNK_SIZE = 2
    confirmed_subscribers(6)
    issue = IssueFactory()
    sending.start_send(issue_id=issue.pk, queue_chunk=None)

    class BrokerDownAfterOne(ChunkQueue):
        def __call__(self, *args, **kwargs) -> None:
            if self:
                raise ConnectionError("broker unreachable")
            super().__call__(*args, **kwargs)

    queue = BrokerDownAfterOne()
    assert sending.dispatch_chunks(issue_id=issue.pk, queue_chunk=queue) == 1
    assert len(queue) == 1


def test_sent_message_headers_and_parts_read_back_from_smtp(smtp_settings, smtp_server):
    subscriber = SubscriberFactory(email="ada@example.com", name="Ada")
    issue = IssueFactory(subject="Attention, slowly")
    assert sending.start_send(issue_id=issue.pk, queue_chunk=None) == 1
    result = _send_all(issue)
    assert (result.sent, result.failed, result.deferred) == (1, 0, 0)

    [received] = smtp_server.recorder.received
    assert received.rcpt == ["ada@example.com"]
    message = received.message()
    assert message["Subject"] == "Attention, slowly"
    assert message["To"] == "ada@example.com"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["List-Id"] == "From Scratch weekly <weekly.fromscratch.test>"
    https_link, mailto = [part.strip(" <>") for part in message["List-Unsubscribe"].split(",")]
    assert https_link.startswith("http://127.0.0.1:8000/newsletter/unsubscribe/")
    assert mailto == "mailto:unsubscribe@fromscratch.test?subject=unsubscribe"
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(preferencelist=("plain",)).get_content()
    html = message.get_body(preferencelist=("html",)).get_content()
    assert "Hello Ada," in text
    assert "Hello Ada," in html
    assert https_link in text
    assert https_link in html
    # Maths: readable text in the text part, a typeset picture with that text as alt in the
    # HTML part (tests/newsletter/test_mail_rendering.py has the details); no MathML.
    assert "QKᵀ/√(d_k)" in text
    assert 'alt="QKᵀ/√(d_k)"' in html
    assert "<math" not in html

    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.lease_owner) == ("sent", 1, "")
    assert delivery.sent_at is not None
    issue.refresh_from_db()
    assert issue.status == "sent"
    assert issue.finished_at is not None

    # The header's link unsubscribes with one cookie-less POST, as a mail client does it.
    response = Client(enforce_csrf_checks=True).post(
        urlsplit(https_link).path,
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 200
    subscriber.refresh_from_db()
    assert subscriber.status == "unsubscribed"


def test_freeze_takes_only_confirmed_subscribers(db, django_assert_max_num_queries):
    confirmed_subscribers(40)
    SubscriberFactory.create_batch(3, status="pending")
    SubscriberFactory.create_batch(2, status="unsubscribed")
    issue = IssueFactory()
    with django_assert_max_num_queries(6):  # set-based: no query per recipient
        assert sending.start_send(issue_id=issue.pk, queue_chunk=None) == 40
    assert set(Delivery.objects.values_list("subscriber__status", flat=True)) == {"confirmed"}
    issue.refresh_from_db()
    assert issue.status == "sending"
    # Starting again sends nothing twice.
    assert sending.start_send(issue_id=issue.pk, queue_chunk=None) == 0
    assert Delivery.objects.count() == 40


def test_resume_after_crash_skips_nobody_and_repeats_nobody(smtp_settings, smtp_server):
    """A chunk died half-way: 10 rows sent, 10 still leased by the dead task. After the lease
    runs out the sweeper's chunk sends exactly the 30 not sent, and the issue ends sent."""
    subs = confirmed_subscribers(40)
    issue = IssueFactory()
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    rows = list(issue.deliveries.order_by("id"))
    past = timezone.now() - timedelta(minutes=10)
    Delivery.objects.filter(pk__in=[d.pk for d in rows[:10]]).update(
        status="sent", sent_at=past, attempts=1
    )
    Delivery.objects.filter(pk__in=[d.pk for d in rows[10:20]]).update(
        lease_owner="dead-task", lease_until=timezone.now() + timedelta(minutes=1), updated_at=past
    )
    Delivery.objects.filter(pk__in=[d.pk for d in rows[20:]]).update(updated_at=past)

    # While the dead task's lease lasts, another task sends only the free rows.
    assert _send_all(issue, owner="other").sent == 20
    issue.refresh_from_db()
    assert issue.status == "sending"  # ten are still queued
    # The lease runs out; the sweeper (acting later) re-queues the rest.
    later = timezone.now() + timedelta(minutes=2)
    queue = ChunkQueue()
    assert sending.sweep(now=later, queue_chunk=queue) == {issue.pk: 10}
    assert queue == [(issue.pk, rows[10].pk, rows[19].pk, 0)]
    # The dead task itself, redelivered by the broker, may take its rows back at once.
    assert _send_all(issue, owner="dead-task").sent == 10
    got = smtp_server.recorder.recipients()
    assert sorted(got) == sorted(s.email for s in subs[10:])
    assert set(got.values()) == {1}
    issue.refresh_from_db()
    assert issue.status == "sent"


def test_unsubscribed_after_freeze_is_skipped(smtp_settings, smtp_server):
    keep, leave = SubscriberFactory(), SubscriberFactory()
    issue = IssueFactory()
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    leave.unsubscribe()
    result = _send_all(issue)
    assert (result.sent, result.skipped) == (1, 1)
    assert list(smtp_server.recorder.recipients()) == [keep.email]
    issue.refresh_from_db()
    assert issue.status == "sent"


def test_temporary_and_permanent_smtp_failures_in_process(
    smtp_settings, smtp_server, settings, django_capture_on_commit_callbacks
):
    settings.NEWSLETTER_MAX_ATTEMPTS = 3
    SubscriberFactory(email="ok@example.com")
    SubscriberFactory(email="later@example.com")
    SubscriberFactory(email="never@example.com")
    SubscriberFactory(email="busy@example.com")
    rec = smtp_server.recorder
    rec.refuse["later@example.com"] = ["451 4.3.0 Try again later"]
    rec.refuse_always["never@example.com"] = "550 5.1.1 No such user"
    rec.refuse_always["busy@example.com"] = "452 4.2.2 Mailbox full"
    issue = IssueFactory()
    sending.start_send(issue_id=issue.pk, queue_chunk=None)

    queue = ChunkQueue()
    first = _send_all(issue, queue=queue)
    assert (first.sent, first.deferred, first.failed) == (1, 2, 1)
    # The chunk queues itself again for when the earliest deferred row is due.
    [(issue_id, first_id, last_id, countdown)] = queue
    assert (issue_id, first_id, last_id) == (issue.pk, *_id_range(issue))
    assert 1 <= countdown <= settings.NEWSLETTER_RETRY_BACKOFF + 1
    later = Delivery.objects.get(subscriber__email="later@example.com")
    assert (later.status, later.attempts, later.last_error) == (
        "queued",
        1,
        "451 4.3.0 Try again later",
    )
    assert later.next_attempt_at > timezone.now()
    never = Delivery.objects.get(subscriber__email="never@example.com")
    assert (never.status, never.last_error) == ("failed", "550 5.1.1 No such user")

    # Not yet due: nothing is retried early.
    assert _send_all(issue).sent == 0
    for _ in range(2):
        Delivery.objects.queued().update(next_attempt_at=timezone.now() - timedelta(seconds=1))
        _send_all(issue)
    busy = Delivery.objects.get(subscriber__email="busy@example.com")
    assert busy.status == "failed"
    assert busy.attempts == 3
    assert busy.last_error == "gave up after 3 attempts; last answer: 452 4.2.2 Mailbox full"
    assert rec.recipients() == {"ok@example.com": 1, "later@example.com": 1}
    issue.refresh_from_db()
    assert issue.status == "sent"
    assert issue.delivery_counts() == {
        "total": 4, "queued": 0, "sent": 2, "failed": 2, "skipped": 0, "done": 4,
    }  # fmt: skip

    # Retry failed: the permanent one fails again, and the issue stays honest about it.
    rec.refuse_always.pop("busy@example.com")
    failed = list(issue.deliveries.failed().order_by("id").values_list("id", flat=True))
    queue = ChunkQueue()
    with django_capture_on_commit_callbacks(execute=True):
        assert sending.retry_failed(issue_id=issue.pk, queue_chunk=queue) == 2
    assert queue == [(issue.pk, failed[0], failed[1], 0)]
    _send_all(issue)
    issue.refresh_from_db()
    assert issue.status == "sent"
    assert issue.delivery_counts()["failed"] == 1
    assert rec.recipients()["busy@example.com"] == 1


def test_unreachable_smtp_server_ends_failed_not_stuck(settings, fast_settings):
    from tests.newsletter.smtp import free_port

    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()  # nobody listens
    settings.NEWSLETTER_MAX_ATTEMPTS = 2
    SubscriberFactory.create_batch(3)
    issue = IssueFactory()
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    assert _send_all(issue).deferred == 3
    Delivery.objects.queued().update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    assert _send_all(issue).failed == 3
    issue.refresh_from_db()
    assert issue.status == "failed"
    assert Delivery.objects.first().last_error.startswith(
        "gave up after 2 attempts; last answer: SMTP connection: ConnectionRefusedError"
    )


def test_sweeper_finalises_issue_left_sending(db):
    issue = IssueFactory(status=Issue.Status.SENDING)
    SubscriberFactory()
    Delivery.objects.create(issue=issue, subscriber=Subscriber.objects.get(), status="sent")
    queue = ChunkQueue()
    assert sending.sweep(queue_chunk=queue) == {}
    assert queue == []
    issue.refresh_from_db()
    assert issue.status == "sent"


def test_send_due_issues_starts_only_due_scheduled(db):
    SubscriberFactory()
    due = IssueFactory(status="scheduled", send_at=timezone.now() - timedelta(minutes=1))
    future = IssueFactory(status="scheduled", send_at=timezone.now() + timedelta(days=1))
    draft = IssueFactory(status="draft", send_at=timezone.now() - timedelta(days=1))
    assert sending.send_due_issues(queue_chunk=None) == [due.pk]
    assert dict(Issue.objects.values_list("pk", "status")) == {
        due.pk: "sending", future.pk: "scheduled", draft.pk: "draft",
    }  # fmt: skip


def test_beat_schedule_is_created_idempotently(db):
    from django_celery_beat.models import PeriodicTask

    from newsletter import demo

    demo.load()
    demo.load()
    tasks = dict(
        PeriodicTask.objects.filter(name__startswith="newsletter").values_list("name", "task")
    )
    assert tasks == {
        schedule.SEND_DUE_TASK_NAME: "newsletter.tasks.send_due_issues",
        schedule.SWEEP_TASK_NAME: "newsletter.tasks.sweep",
    }
    weekly = PeriodicTask.objects.get(name=schedule.SEND_DUE_TASK_NAME).crontab
    assert (weekly.minute, weekly.hour, weekly.day_of_week) == ("0", "8", "1")
    assert Issue.objects.sent().count() == 1


def test_beat_schedule_of_the_migration_is_the_services_schedule(db):
    """Migration 0002 wrote the schedule from the same definition: nothing is left to add."""
    from django_celery_beat.models import PeriodicTask

    assert schedule.ensure_periodic_tasks() == "schedule already there"
    sweeper = PeriodicTask.objects.get(name=schedule.SWEEP_TASK_NAME)
    assert (sweeper.interval.every, sweeper.interval.period) == (
        settings.NEWSLETTER_SWEEP_INTERVAL,
        "seconds",
    )
    PeriodicTask.objects.filter(name__startswith="newsletter").delete()
    assert schedule.ensure_periodic_tasks() == "weekly send, sweeper"


def test_prepared_bytes_match_the_ordinary_message(db):
    """The fast path (markers replaced in serialised bytes) says what the slow path says."""
    import email
    from email import policy

    from newsletter.emails import IssueMail

    subscriber = SubscriberFactory(email="zoe@example.com", name="Zoë <&> O'Neil")
    mail = IssueMail(IssueFactory(subject="Naïve Bayes, slowly"))
    assert mail._parts is not None
    fast = email.message_from_bytes(mail.raw(subscriber), policy=policy.default)
    slow = mail.message(subscriber).message()
    slow = email.message_from_bytes(slow.as_bytes(linesep="\r\n"), policy=policy.default)
    for header in ("Subject", "From", "To", "List-Unsubscribe", "List-Unsubscribe-Post", "List-Id"):
        assert fast[header].strip() == slow[header].strip()  # folding may differ
    assert fast["Message-ID"] != slow["Message-ID"]
    for kind in ("plain", "html"):
        assert (
            fast.get_body(preferencelist=(kind,)).get_content()
            == slow.get_body(preferencelist=(kind,)).get_content()
        )
    assert (
        "Hello Zoë &lt;&amp;&gt; O&#x27;Neil,"
        in fast.get_body(preferencelist=("html",)).get_content()
    )
    assert "Hello Zoë <&> O'Neil," in fast.get_body(preferencelist=("plain",)).get_content()
    assert mail.raw(subscriber) != mail.raw(subscriber)  # a fresh Message-ID each time


def test_sweeper_leaves_waiting_rows_alone_while_the_send_progresses(db):
    issue = IssueFactory()
    confirmed_subscribers(6)
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    rows = list(issue.deliveries.order_by("id"))
    past = timezone.now() - timedelta(minutes=10)
    Delivery.objects.filter(pk__in=[d.pk for d in rows[2:]]).update(updated_at=past)
    Delivery.objects.filter(pk=rows[2].pk).update(lease_owner="dead", lease_until=past)
    Delivery.objects.filter(pk=rows[0].pk).update(status="sent")  # touched just now
    # Progress within the window: only the row a dead task held is re-queued.
    queue = ChunkQueue()
    assert sending.sweep(queue_chunk=queue) == {issue.pk: 1}
    assert queue == [(issue.pk, rows[2].pk, rows[2].pk, 0)]
    # No progress for longer than NEWSLETTER_STALE_AFTER: every free queued row is.
    later = timezone.now() + timedelta(minutes=30)
    queue.clear()
    assert sending.sweep(now=later, queue_chunk=queue) == {issue.pk: 5}
    assert queue == [(issue.pk, rows[1].pk, rows[5].pk, 0)]


def test_demo_letter_loads_from_its_content_file_once(db, tmp_path):
    from newsletter import demo
    from platform.frontmatter import ContentError

    assert demo.load().endswith("1 archived letter(s), 1 created")
    assert demo.load().endswith("1 archived letter(s), 0 created")
    issue = Issue.objects.get(subject="From Scratch — the first letter: reading attention")
    assert issue.status == Issue.Status.SENT
    assert r"$$\operatorname{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V$$" in issue.body

    (tmp_path / "bad.md").write_text('+++\nsubject = "x"\n+++\nbody\n')
    with pytest.raises(ContentError) as caught:
        demo.load(tmp_path)
    assert (
        str(caught.value)
        == f"{tmp_path / 'bad.md'} [sent_days_ago]: missing required key 'sent_days_ago'"
    )

"""Sends through a real Celery worker (subprocess) to a real SMTP server, with faults.

The Redis tests skip without REDIS_URL locally and must run in CI (env CI set). Figures of the
fault tests (messages in flight at the kill, duplicates) are printed and written to
``<VAR_DIR>/newsletter-faults.txt``.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter

import pytest
from django.conf import settings

from newsletter import tasks
from newsletter.models import Delivery, Issue
from newsletter.services import sending
from tests.factories import UserFactory
from tests.newsletter.factories import IssueFactory, SubscriberFactory, confirmed_subscribers
from tests.support.celery_worker import needs_redis
from tests.support.newsletter import fast_sweeper, sending_env, wait_for_status
from tests.support.private_services import PrivateRedis

pytestmark = [pytest.mark.worker, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _empty_broker(transactional_db):
    """No task left over from another test reaches this test's worker."""
    from platform.celery import app

    with contextlib.suppress(Exception):  # an unreachable broker is the test's business
        app.control.purge()


def _report(line: str) -> None:
    print(line)
    with open(settings.VAR_DIR / "newsletter-faults.txt", "a") as out:
        out.write(line + "\n")


def test_send_to_500_arrives_exactly_once(start_worker, smtp_server, fast_settings):
    confirmed = confirmed_subscribers(500)
    pending = SubscriberFactory.create_batch(10, status="pending")
    gone = SubscriberFactory.create_batch(10, status="unsubscribed")
    issue = IssueFactory(subject="Five hundred")
    worker = start_worker(concurrency=2, env=sending_env(smtp_server))
    assert sending.start_send(issue_id=issue.pk, queue_chunk=tasks.queue_chunk) == 500
    wait_for_status(issue, {"sent", "failed"}, 120, worker)

    assert issue.status == "sent"
    got = smtp_server.recorder.recipients()
    assert got == Counter({s.email: 1 for s in confirmed})
    assert not set(got) & {s.email for s in pending + gone}
    assert Delivery.objects.filter(issue=issue, status="sent").count() == 500
    assert set(Delivery.objects.filter(issue=issue).values_list("subscriber_id", flat=True)) == {
        s.pk for s in confirmed
    }
    assert not Delivery.objects.filter(sent_at__isnull=True).exists()


def test_temporary_refusals_retried_permanent_recorded(
    start_worker, smtp_server, fast_settings, client
):
    confirmed_subscribers(30)
    rec = smtp_server.recorder
    rec.refuse["r1@example.com"] = ["451 4.3.0 Try again later", "451 4.3.0 Try again later"]
    rec.refuse["r2@example.com"] = ["421 4.7.0 Too busy, closing"]  # also drops the connection
    rec.refuse_always["r3@example.com"] = "550 5.1.1 No such user"
    issue = IssueFactory()
    worker = start_worker(concurrency=2, env=sending_env(smtp_server))
    sending.start_send(issue_id=issue.pk, queue_chunk=tasks.queue_chunk)
    wait_for_status(issue, {"sent", "failed"}, 90, worker)

    assert issue.status == "sent"
    assert issue.delivery_counts() == {
        "total": 30, "queued": 0, "sent": 29, "failed": 1, "skipped": 0, "done": 30,
    }  # fmt: skip
    got = rec.recipients()
    assert (got["r1@example.com"], got["r2@example.com"], got["r3@example.com"]) == (1, 1, 0)
    assert len(got) == 29
    assert set(got.values()) == {1}
    r1 = Delivery.objects.get(subscriber__email="r1@example.com")
    assert (r1.status, r1.attempts, r1.last_error) == ("sent", 3, "")
    r3 = Delivery.objects.get(subscriber__email="r3@example.com")
    assert (r3.status, r3.attempts, r3.last_error) == ("failed", 1, "550 5.1.1 No such user")

    # The issue's admin page shows the one failure with the server's answer.
    admin = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(admin)
    fragment = client.get(f"/admin/newsletter/issue/{issue.pk}/progress/").content.decode()
    assert '<strong data-count="failed">1</strong> failed' in fragment
    assert "r3@example.com</td><td>1</td><td>550 5.1.1 No such user" in fragment
    assert "hx-trigger" not in fragment  # finished: the page stops polling


@pytest.mark.redis
def test_sigkill_worker_mid_send_loses_nobody(start_worker, smtp_server, fast_settings):
    needs_redis()
    confirmed = confirmed_subscribers(2000)
    issue = IssueFactory(subject="Two thousand")
    fast_sweeper()
    env = sending_env(smtp_server)
    rec = smtp_server.recorder
    rec.keep_content = False
    first = start_worker(concurrency=2, env=env)
    started = time.monotonic()
    sending.start_send(issue_id=issue.pk, queue_chunk=tasks.queue_chunk)
    rec.wait_for(700, timeout=90)
    first.kill()
    accepted_at_kill = set(rec.recipients())
    marked_sent = set(
        Delivery.objects.filter(issue=issue, status="sent").values_list(
            "subscriber__email", flat=True
        )
    )
    in_flight = len(accepted_at_kill - marked_sent)
    assert marked_sent <= accepted_at_kill  # never marked sent before the server accepted

    second = start_worker(concurrency=2, env=env, args=["-B"])
    wait_for_status(issue, {"sent", "failed"}, 150, second)
    took = time.monotonic() - started
    got = rec.recipients()
    duplicates = sum(n - 1 for n in got.values())
    _report(
        f"SIGKILL: 2000 recipients, killed after {len(accepted_at_kill)} accepted; in flight "
        f"(accepted, not yet marked sent) {in_flight}; duplicates {duplicates}; "
        f"missing {len({s.email for s in confirmed} - set(got))}; total {took:.1f}s"
    )
    assert issue.status == "sent"
    assert set(got) == {s.email for s in confirmed}
    assert duplicates <= in_flight
    assert Delivery.objects.filter(issue=issue, status="sent").count() == 2000


@pytest.mark.redis
def test_redis_restart_mid_send_completes(start_worker, smtp_server, fast_settings, tmp_path):
    redis = PrivateRedis(tmp_path)
    redis.start()
    try:
        confirmed = confirmed_subscribers(1500)
        issue = IssueFactory(subject="Through a Redis restart")
        fast_sweeper()
        rec = smtp_server.recorder
        rec.keep_content = False
        worker = start_worker(
            concurrency=2, env=sending_env(smtp_server, REDIS_URL=redis.url), args=["-B"]
        )
        from platform.celery import app

        with app.connection_for_write(redis.url) as conn:
            tasks.send_issue.apply_async((issue.pk,), connection=conn)
        rec.wait_for(300, timeout=60)
        redis.stop()  # everything queued in Redis is gone
        at_restart = rec.count
        time.sleep(1)
        redis.start()
        wait_for_status(issue, {"sent", "failed"}, 150, worker)
        got = rec.recipients()
        duplicates = sum(n - 1 for n in got.values())
        _report(
            f"Redis restart: 1500 recipients, Redis stopped after {at_restart} accepted; "
            f"duplicates {duplicates}; missing {len({s.email for s in confirmed} - set(got))}"
        )
        assert issue.status == "sent"
        assert set(got) == {s.email for s in confirmed}
        assert duplicates <= 2  # at most one in flight per worker process
        assert Delivery.objects.filter(issue=issue, status="sent").count() == 1500
    finally:
        redis.stop()


def test_issue_status_values_are_the_designed_ones():
    assert [s.value for s in Issue.Status] == ["draft", "scheduled", "sending", "sent", "failed"]

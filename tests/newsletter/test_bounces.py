"""Bounces, complaints and unsubscribes: anymail's webhooks (Postmark-shaped posts through the
test client) and ``process_bounces`` over DSN messages built with the email package."""

from __future__ import annotations

import base64
import json
import mailbox
from email.message import EmailMessage, Message
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client

from newsletter.models import BounceEvent, Delivery, Subscriber
from newsletter.services import sending
from tests.newsletter.factories import IssueFactory, SubscriberFactory

pytestmark = pytest.mark.django_db

SECRET = "hooks:s3cret-for-tests"
URL = "/newsletter/anymail/postmark/tracking/"


@pytest.fixture
def postmark(settings):
    """Postmark through anymail (its test backend for sending), webhook secret set."""
    settings.ANYMAIL_ESP = "postmark"
    settings.ANYMAIL = {"POSTMARK_SERVER_TOKEN": "unused", "WEBHOOK_SECRET": SECRET}
    settings.NEWSLETTER_SOFT_BOUNCE_LIMIT = 3
    return settings


def _auth(secret: str = SECRET) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(secret.encode()).decode()}


def _sent_delivery(email: str, esp_id: str = "") -> Delivery:
    subscriber = SubscriberFactory(email=email)
    issue = IssueFactory(status="sent")
    return Delivery.objects.create(
        issue=issue, subscriber=subscriber, status="sent", esp_message_id=esp_id
    )


def _postmark_bounce(email: str, message_id: str, *, kind: str = "HardBounce", event_id=1):
    """A Postmark bounce webhook body, in the shape of Postmark's docs and anymail's tests."""
    return {
        "RecordType": "Bounce",
        "ID": event_id,
        "Type": kind,
        "TypeCode": 1 if kind == "HardBounce" else 4096,
        "Name": "Hard bounce" if kind == "HardBounce" else "Soft bounce",
        "Tag": "newsletter",
        "MessageID": message_id,
        "Metadata": {},
        "ServerID": 23,
        "MessageStream": "outbound",
        "Description": "The server was unable to deliver your message (ex: unknown user, "
        "mailbox not found).",
        "Details": "smtp;550 5.1.1 The email account that you tried to reach does not exist."
        if kind == "HardBounce"
        else "smtp;452 4.2.2 The email account that you tried to reach is over quota.",
        "Email": email,
        "From": "hello@fromscratch.test",
        "BouncedAt": "2026-11-30T16:33:54.9070259Z",
        "DumpAvailable": True,
        "Inactive": kind == "HardBounce",
        "CanActivate": True,
        "Subject": "Letter 1",
    }


def _post(client: Client, body: dict, **extra) -> int:
    return client.post(URL, json.dumps(body), content_type="application/json", **extra).status_code


def test_webhook_hard_bounce_suppresses_and_keeps_the_event(postmark, client):
    delivery = _sent_delivery("gone@example.com", "883953f4-6105-42a2-a16a-77a8eac79483")
    other = _sent_delivery("gone2@example.com", "00000000-0000-0000-0000-000000000000")
    body = _postmark_bounce("gone@example.com", delivery.esp_message_id)
    assert _post(client, body, **_auth()) == 200

    subscriber = Subscriber.objects.get(email="gone@example.com")
    assert subscriber.status == "bounced"
    assert subscriber.suppressed_reason.startswith("hard bounce: The server was unable")
    delivery.refresh_from_db()
    assert delivery.event == "bounced"
    assert delivery.event_at.isoformat() == "2026-11-30T16:33:54.907025+00:00"
    assert "550 5.1.1" in delivery.event_description
    other.refresh_from_db()
    assert (other.event, other.subscriber.status) == ("", "confirmed")


def test_webhook_refuses_missing_or_wrong_auth(postmark, client):
    delivery = _sent_delivery("gone@example.com", "abc")
    body = _postmark_bounce("gone@example.com", "abc")
    assert _post(client, body) == 400  # anymail: missing basic auth → SuspiciousOperation
    assert _post(client, body, **_auth("hooks:wrong")) == 400
    postmark.ANYMAIL = {"POSTMARK_SERVER_TOKEN": "unused", "WEBHOOK_SECRET": ""}
    assert _post(client, body) == 403  # no secret configured: webhooks are off
    assert Subscriber.objects.get(pk=delivery.subscriber_id).status == "confirmed"
    assert not BounceEvent.objects.exists()


@pytest.mark.parametrize("body", ["not json", "[]", "[1, 2]"])
def test_webhook_unreadable_payload_is_a_400_with_a_message(postmark, client, body):
    response = client.post(URL, body, content_type="application/json", **_auth())
    assert response.status_code == 400
    assert response.content.decode().startswith("Unreadable postmark webhook payload (")
    assert not BounceEvent.objects.exists()


@pytest.mark.parametrize(
    "body", ["{}", '{"RecordType": "Bounce"}', '{"RecordType": "Bounce", "Type": 1}']
)
def test_webhook_payload_without_a_recipient_changes_nothing(postmark, client, body):
    _sent_delivery("kept@example.com", "m-1")
    response = client.post(URL, body, content_type="application/json", **_auth())
    assert response.status_code == 200  # anymail accepts it; there is nothing to apply
    assert not BounceEvent.objects.exists()
    assert Subscriber.objects.get(email="kept@example.com").status == "confirmed"


def test_webhook_for_another_provider_is_not_found(postmark, client):
    url = "/newsletter/anymail/mailgun/tracking/"
    response = client.post(url, "{}", content_type="application/json", **_auth())
    assert response.status_code == 404


def test_webhook_complaint_and_unsubscribe(postmark, client):
    complained = _sent_delivery("spam@example.com", "m-1")
    leaving = _sent_delivery("bye@example.com", "m-2")
    complaint = {
        **_postmark_bounce("spam@example.com", "m-1", event_id=7),
        "RecordType": "SpamComplaint",
        "Type": "SpamComplaint",
        "TypeCode": 512,
        "Description": "The subscriber explicitly marked this message as spam.",
    }
    change = {
        "RecordType": "SubscriptionChange",
        "MessageID": "m-2",
        "ServerID": 23,
        "MessageStream": "outbound",
        "ChangedAt": "2026-11-30T17:00:00Z",
        "Recipient": "bye@example.com",
        "Origin": "Recipient",
        "SuppressSending": True,
        "SuppressionReason": "ManualSuppression",
        "Tag": "newsletter",
        "Metadata": {},
    }
    assert _post(client, complaint, **_auth()) == 200
    assert _post(client, change, **_auth()) == 200
    assert Subscriber.objects.get(pk=complained.subscriber_id).status == "complained"
    assert Subscriber.objects.get(pk=leaving.subscriber_id).status == "unsubscribed"
    assert Delivery.objects.get(pk=complained.pk).event == "complained"
    assert Delivery.objects.get(pk=leaving.pk).event == "unsubscribed"


def test_webhook_soft_bounces_count_to_the_limit_and_replays_count_once(postmark, client):
    delivery = _sent_delivery("full@example.com", "m-9")
    soft = _postmark_bounce("full@example.com", "m-9", kind="SoftBounce", event_id=100)
    assert _post(client, soft, **_auth()) == 200
    assert _post(client, soft, **_auth()) == 200  # Postmark retrying the same event
    subscriber = Subscriber.objects.get(pk=delivery.subscriber_id)
    assert (subscriber.status, subscriber.soft_bounces) == ("confirmed", 1)
    assert _post(client, {**soft, "ID": 101}, **_auth()) == 200
    subscriber.refresh_from_db()
    assert (subscriber.status, subscriber.soft_bounces) == ("confirmed", 2)
    assert _post(client, {**soft, "ID": 102}, **_auth()) == 200
    subscriber.refresh_from_db()
    assert (subscriber.status, subscriber.soft_bounces) == ("bounced", 3)
    assert subscriber.suppressed_reason.startswith("3 soft bounces; last:")
    assert Delivery.objects.get(pk=delivery.pk).event == "bounced"  # anymail's event type
    assert BounceEvent.objects.filter(kind="soft").count() == 3


def test_esp_send_stores_the_message_id_and_the_webhook_finds_it(postmark, client):
    postmark.EMAIL_BACKEND = "anymail.backends.test.EmailBackend"
    reader = SubscriberFactory(email="esp@example.com")
    issue = IssueFactory()
    sending.start_send(issue_id=issue.pk, queue_chunk=None)
    delivery = Delivery.objects.get(issue=issue)
    result = sending.send_chunk(
        issue_id=issue.pk, first_id=delivery.pk, last_id=delivery.pk, owner="t", queue_chunk=None
    )
    assert result.sent == 1
    delivery.refresh_from_db()
    assert delivery.esp_message_id == str(mail.outbox.index(mail.outbox[-1]))
    # The bounce names the ESP's id: matched even though the address differs in case.
    body = _postmark_bounce("ESP@example.com", delivery.esp_message_id)
    assert _post(client, body, **_auth()) == 200
    reader.refresh_from_db()
    assert reader.status == "bounced"
    assert Delivery.objects.get(pk=delivery.pk).event == "bounced"

    # Suppressed: the next issue does not include them.
    later = IssueFactory()
    assert sending.start_send(issue_id=later.pk, queue_chunk=None) == 0


def test_suppressed_subscriber_comes_back_only_through_double_opt_in(postmark, client):
    from newsletter import tokens

    delivery = _sent_delivery("back@example.com", "m-5")
    assert _post(client, _postmark_bounce("back@example.com", "m-5"), **_auth()) == 200
    subscriber = Subscriber.objects.get(pk=delivery.subscriber_id)
    # The "subscribe me again" button of an old unsubscribe link does not lift a suppression.
    token = tokens.unsubscribe_token(subscriber)
    response = client.post(f"/newsletter/unsubscribe/{token}/resubscribe/")
    assert response.status_code == 409
    assert 'data-outcome="suppressed"' in response.content.decode()
    subscriber.refresh_from_db()
    assert subscriber.status == "bounced"
    # Signing up again mails a confirmation link; following it confirms and clears the count.
    mail.outbox = []
    client.post("/newsletter/", {"email": "back@example.com"})
    assert len(mail.outbox) == 1
    confirm = client.post(f"/newsletter/confirm/{tokens.confirmation_token(subscriber)}/")
    assert confirm.status_code in (200, 302)
    subscriber.refresh_from_db()
    assert (subscriber.status, subscriber.soft_bounces, subscriber.suppressed_at) == (
        "confirmed",
        0,
        None,
    )


# --- DSN mail (plain SMTP) ---------------------------------------------------------------------


def dsn(
    recipient: str, status: str, *, action: str = "failed", message_id: str = "<dsn-1@mx>"
) -> Message:
    """An RFC 3464 delivery status notification, as an MTA writes it."""
    report = MIMEMultipart("report", report_type="delivery-status")
    report["From"] = "Mail Delivery System <MAILER-DAEMON@mx.example.net>"
    report["To"] = "bounces@fromscratch.test"
    report["Subject"] = "Undelivered Mail Returned to Sender"
    report["Date"] = "Mon, 30 Nov 2026 10:00:00 +0000"
    report["Message-ID"] = message_id
    report.attach(MIMEText(f"I'm sorry to have to inform you that your message to {recipient} "
                           "could not be delivered.\n"))  # fmt: skip
    status_part = MIMEBase("message", "delivery-status")
    per_message = Message()
    per_message["Reporting-MTA"] = "dns; mx.example.net"
    per_message["Arrival-Date"] = "Mon, 30 Nov 2026 09:59:58 +0000"
    per_recipient = Message()
    per_recipient["Final-Recipient"] = f"rfc822; {recipient}"
    per_recipient["Original-Recipient"] = f"rfc822;{recipient}"
    per_recipient["Action"] = action
    per_recipient["Status"] = status
    per_recipient["Remote-MTA"] = "dns; mail.example.com"
    per_recipient["Diagnostic-Code"] = f"smtp; {status[0]}50 {status} mailbox problem"
    status_part.set_payload([per_message, per_recipient])
    report.attach(status_part)
    headers = MIMEBase("text", "rfc822-headers")
    headers.set_payload(f"From: hello@fromscratch.test\nTo: {recipient}\nSubject: Letter 1\n")
    report.attach(headers)
    return report


def _process(path) -> str:
    out = StringIO()
    call_command("process_bounces", str(path), stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def test_process_bounces_maildir_hard_soft_idempotent(tmp_path, settings):
    settings.NEWSLETTER_SOFT_BOUNCE_LIMIT = 2
    hard = _sent_delivery("nouser@example.com")
    soft = _sent_delivery("full@example.com")
    box = mailbox.Maildir(tmp_path / "bounces", create=True)
    box.add(dsn("nouser@example.com", "5.1.1", message_id="<a@mx>"))
    box.add(dsn("full@example.com", "4.2.2", action="delayed", message_id="<b@mx>"))
    box.add(dsn("stranger@example.com", "5.1.1", message_id="<c@mx>"))
    box.add(dsn("ok@example.com", "2.0.0", action="delivered", message_id="<d@mx>"))
    plain = EmailMessage()
    plain["Subject"] = "Out of office"
    plain.set_content("Back on Monday.")
    box.add(plain)
    box.add(b"Content-Type: multipart/report; report-type=delivery-status; boundary=\"x\"\n\n"
            b"--x\nContent-Type: message/delivery-status\n\n")  # fmt: skip
    box.close()

    assert _process(tmp_path / "bounces") == (
        f"6 messages read from {tmp_path / 'bounces'}: 1 hard bounce: suppressed, "
        "1 hard bounce: unknown, 1 malformed, 1 no failure reported, 1 not a delivery report, "
        "1 soft bounce: counted"
    )
    assert Subscriber.objects.get(pk=hard.subscriber_id).status == "bounced"
    full = Subscriber.objects.get(pk=soft.subscriber_id)
    assert (full.status, full.soft_bounces) == ("confirmed", 1)
    hard.refresh_from_db()
    assert (hard.event, hard.event_at.isoformat()) == ("bounced", "2026-11-30T10:00:00+00:00")
    assert hard.event_description == "failed 5.1.1 smtp; 550 5.1.1 mailbox problem"

    # Read again: nothing counts twice.
    assert _process(tmp_path / "bounces").endswith(
        ": 2 hard bounce: duplicate, 1 malformed, 1 no failure reported, "
        "1 not a delivery report, 1 soft bounce: duplicate"
    )
    full.refresh_from_db()
    assert full.soft_bounces == 1
    assert BounceEvent.objects.count() == 3


def test_process_bounces_mbox_soft_threshold(tmp_path, settings):
    settings.NEWSLETTER_SOFT_BOUNCE_LIMIT = 2
    delivery = _sent_delivery("full@example.com")
    box = mailbox.mbox(tmp_path / "bounces.mbox", create=True)
    box.add(dsn("full@example.com", "4.2.2", message_id="<s1@mx>"))
    box.add(dsn("full@example.com", "4.2.2", message_id="<s2@mx>"))
    box.close()
    assert _process(tmp_path / "bounces.mbox") == (
        f"2 messages read from {tmp_path / 'bounces.mbox'}: 1 soft bounce: counted, "
        "1 soft bounce: suppressed"
    )
    subscriber = Subscriber.objects.get(pk=delivery.subscriber_id)
    assert (subscriber.status, subscriber.soft_bounces) == ("bounced", 2)


def test_process_bounces_missing_path_is_an_error(tmp_path):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="does not exist"):
        _process(tmp_path / "nothing-here")

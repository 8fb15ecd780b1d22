"""Sign-up, double opt-in, one-click unsubscribe, the account switch."""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core import mail, signing
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from newsletter import tokens
from newsletter.models import Subscriber
from tests.newsletter.factories import SubscriberFactory

pytestmark = pytest.mark.django_db

SUBSCRIBE = "/newsletter/"


def _link(message, pattern: str) -> str:
    found = re.search(pattern, message.body)
    assert found, message.body
    return found[0].replace("http://127.0.0.1:8000", "")


def _confirm_path(message) -> str:
    return _link(message, r"http://127\.0\.0\.1:8000/newsletter/confirm/[^/\s]+/")


def test_subscribe_creates_pending_and_mails_signed_link(client):
    response = client.post(SUBSCRIBE, {"email": "Ada@Example.com", "source": "chapter:rope"})
    assert response.status_code == 200
    subscriber = Subscriber.objects.get()
    assert (subscriber.email, subscriber.status, subscriber.source) == (
        "Ada@Example.com",
        "pending",
        "chapter:rope",
    )
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["Ada@Example.com"]
    assert mail.outbox[0].subject == "Confirm your subscription to From Scratch"
    assert "/newsletter/confirm/" in mail.outbox[0].alternatives[0][0]


def test_subscribe_htmx_answers_with_fragment(client):
    response = client.post(SUBSCRIBE, {"email": "ada@example.com"}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.content.decode().startswith('<p class="feedback-ok" data-outcome="sent">')
    assert "<html" not in response.content.decode()


def test_subscribe_invalid_address_is_400_with_message(client):
    response = client.post(SUBSCRIBE, {"email": "not-an-address"}, headers={"HX-Request": "true"})
    assert response.status_code == 400
    assert "does not look like an email address" in response.content.decode()
    assert Subscriber.objects.count() == 0


@pytest.mark.parametrize("source", ["<x>", "s" * 101, "chapter:\x00rope", "a b", ""])
@pytest.mark.parametrize("known", [False, True])
def test_subscribe_with_a_bad_source_still_signs_up_and_answers_the_same(source, known):
    """The source is a hidden field the reader cannot fix: a bad one is dropped, never a 500."""
    if known:
        SubscriberFactory(email="ok@b.test", status="confirmed")
    client = Client(enforce_csrf_checks=True)
    page = client.get(SUBSCRIBE)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())[1]
    response = client.post(
        SUBSCRIBE,
        {"csrfmiddlewaretoken": token, "email": "ok@b.test", "source": source},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert 'data-outcome="sent"' in response.content.decode()
    assert len(mail.outbox) == 1
    assert Subscriber.objects.get().source == ("footer" if known else "")


def test_subscribe_email_unique_case_insensitively(db):
    from django.db import IntegrityError, transaction

    SubscriberFactory(email="ada@example.com")
    with pytest.raises(IntegrityError), transaction.atomic():
        Subscriber.objects.create(email="ADA@example.COM")


def test_confirm_get_shows_button_post_confirms(client):
    client.post(SUBSCRIBE, {"email": "ada@example.com"})
    path = _confirm_path(mail.outbox[0])
    page = client.get(path)
    assert page.status_code == 200
    assert "Confirm my subscription" in page.content.decode()
    assert Subscriber.objects.get().status == "pending"  # a GET (mail scanner) changes nothing
    done = client.post(path)
    assert done.status_code == 200
    assert 'data-outcome="confirmed"' in done.content.decode()
    subscriber = Subscriber.objects.get()
    assert subscriber.status == "confirmed"
    assert subscriber.confirmed_at is not None


class _PastSigner(signing.TimestampSigner):
    """Signs as if it were four days ago."""

    def timestamp(self):
        return signing.b62_encode(int(time.time()) - 4 * 86400)


def test_confirm_expired_link_changes_nothing(client):
    subscriber = SubscriberFactory(status="pending", confirmed_at=None)
    token = _PastSigner(salt=tokens.CONFIRM_SALT).sign(tokens._payload(subscriber))
    response = client.post(reverse("newsletter:confirm", args=[token]))
    assert response.status_code == 400
    assert "This confirmation link has expired." in response.content.decode()
    subscriber.refresh_from_db()
    assert subscriber.status == "pending"


def test_confirm_tampered_link_changes_nothing(client):
    subscriber = SubscriberFactory(status="pending", confirmed_at=None)
    other = SubscriberFactory(status="pending", confirmed_at=None)
    token = tokens.confirmation_token(subscriber)
    tampered = token.replace(f"{subscriber.pk}.", f"{other.pk}.", 1)
    for bad in (tampered, token[:-2] + "xx", tokens.unsubscribe_token(subscriber)):
        response = client.post(reverse("newsletter:confirm", args=[bad]))
        assert response.status_code == 400
    assert set(Subscriber.objects.values_list("status", flat=True)) == {"pending"}


def test_subscribe_answers_the_same_for_known_and_unknown_addresses(client):
    SubscriberFactory(email="pending@example.com", status="pending")
    SubscriberFactory(email="confirmed@example.com", status="confirmed")
    SubscriberFactory(email="gone@example.com", status="unsubscribed")
    bodies = set()
    for address in ("new@example.com", "pending@example.com", "confirmed@example.com",
                    "gone@example.com"):  # fmt: skip
        mail.outbox.clear()
        response = client.post(SUBSCRIBE, {"email": address}, headers={"HX-Request": "true"})
        assert response.status_code == 200
        assert len(mail.outbox) == 1  # every address gets exactly one message
        bodies.add(response.content.decode().replace(address, "ADDRESS"))
    assert len(bodies) == 1
    statuses = dict(Subscriber.objects.values_list("email", "status"))
    assert statuses == {
        "new@example.com": "pending",
        "pending@example.com": "pending",
        "confirmed@example.com": "confirmed",
        "gone@example.com": "unsubscribed",  # unchanged until the owner confirms
    }


def test_subscribe_rate_limited_per_address(client, settings):
    settings.NEWSLETTER_SIGNUP_LIMIT_PER_ADDRESS = 2
    codes = [
        client.post(SUBSCRIBE, {"email": "ada@example.com"}, REMOTE_ADDR=f"10.0.0.{i}").status_code
        for i in range(3)
    ]
    assert codes == [200, 200, 429]
    response = client.post(SUBSCRIBE, {"email": "ada@example.com"}, headers={"HX-Request": "true"})
    assert response.status_code == 429
    assert "Too many sign-up attempts" in response.content.decode()
    assert len(mail.outbox) == 2


def test_subscribe_rate_limited_per_ip(client, settings):
    settings.NEWSLETTER_SIGNUP_LIMIT_PER_IP = 3
    codes = [client.post(SUBSCRIBE, {"email": f"p{i}@example.com"}).status_code for i in range(4)]
    assert codes == [200, 200, 200, 429]
    assert Subscriber.objects.count() == 3


def test_unsubscribe_one_click_post_without_cookies_or_csrf():
    subscriber = SubscriberFactory()
    url = reverse("newsletter:unsubscribe", args=[tokens.unsubscribe_token(subscriber)])
    client = Client(enforce_csrf_checks=True)  # no session, no CSRF cookie: a mail client
    response = client.post(
        url, "List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 200
    subscriber.refresh_from_db()
    assert subscriber.status == "unsubscribed"
    assert subscriber.unsubscribed_at is not None


def test_unsubscribe_get_asks_and_changes_nothing(client):
    subscriber = SubscriberFactory()
    response = client.get(
        reverse("newsletter:unsubscribe", args=[tokens.unsubscribe_token(subscriber)])
    )
    assert response.status_code == 200
    assert "Unsubscribe?" in response.content.decode()
    subscriber.refresh_from_db()
    assert subscriber.status == "confirmed"


def test_unsubscribe_tampered_or_foreign_token_changes_nothing():
    subscriber = SubscriberFactory()
    victim = SubscriberFactory()
    token = tokens.unsubscribe_token(subscriber)
    client = Client(enforce_csrf_checks=True)
    for bad in (
        token.replace(f"{subscriber.pk}.", f"{victim.pk}.", 1),
        token[:-3] + "abc",
        tokens.confirmation_token(victim),  # a token for another purpose
        signing.Signer(salt="another.salt").sign(tokens._payload(victim)),
    ):
        response = client.post(reverse("newsletter:unsubscribe", args=[bad]))
        assert response.status_code == 400
    assert set(Subscriber.objects.values_list("status", flat=True)) == {"confirmed"}


def test_unsubscribe_then_resubscribe_from_the_same_link(client):
    subscriber = SubscriberFactory()
    token = tokens.unsubscribe_token(subscriber)
    page = client.post(reverse("newsletter:unsubscribe", args=[token]))
    assert "Subscribe me again" in page.content.decode()
    response = client.post(reverse("newsletter:resubscribe", args=[token]))
    assert response.status_code == 200
    assert 'data-outcome="resubscribed"' in response.content.decode()
    subscriber.refresh_from_db()
    assert subscriber.status == "confirmed"


def test_resubscribe_requires_csrf(db):
    subscriber = SubscriberFactory(status="unsubscribed")
    client = Client(enforce_csrf_checks=True)
    url = reverse("newsletter:resubscribe", args=[tokens.unsubscribe_token(subscriber)])
    assert client.post(url).status_code == 403
    subscriber.refresh_from_db()
    assert subscriber.status == "unsubscribed"


def test_account_subscribe_skips_confirmation_for_verified_address(learner_client, learner):
    response = learner_client.post(
        reverse("newsletter:account_subscribe"), headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert "Subscribed: the letter goes to learner@example.com." in response.content.decode()
    subscriber = Subscriber.objects.get()
    assert (subscriber.email, subscriber.status, subscriber.user) == (
        "learner@example.com",
        "confirmed",
        learner,
    )
    assert mail.outbox == []
    response = learner_client.post(reverse("newsletter:account_unsubscribe"))
    assert response.status_code == 302
    subscriber.refresh_from_db()
    assert subscriber.status == "unsubscribed"


def test_account_subscribe_refused_without_verified_address(client, db):
    from tests.factories import UserFactory

    user = UserFactory(email="unverified@example.com", verified=False)
    client.force_login(user)
    response = client.post(reverse("newsletter:account_subscribe"), headers={"HX-Request": "true"})
    assert "Verify your email address first" in response.content.decode()
    assert Subscriber.objects.count() == 0


def test_account_page_shows_newsletter_state(learner_client):
    page = learner_client.get(reverse("account"))
    assert page.status_code == 200
    assert "Subscribe learner@example.com" in page.content.decode()


def test_account_deletion_deletes_linked_subscription(learner_client, learner):
    learner_client.post(reverse("newsletter:account_subscribe"))
    assert Subscriber.objects.filter(user=learner).count() == 1
    learner.delete()
    assert Subscriber.objects.count() == 0


def test_confirming_links_subscription_to_account_with_that_address(client, learner):
    client.post(SUBSCRIBE, {"email": "LEARNER@example.com"})
    client.post(_confirm_path(mail.outbox[0]))
    assert Subscriber.objects.get().user == learner


def test_box_runs_no_query_for_anonymous_visitors(rf, django_assert_num_queries):
    request = rf.get("/")
    request.user = AnonymousUser()
    with django_assert_num_queries(0):
        html = render_to_string(
            "newsletter/_box.html", {"box_id": "chapter", "source": "chapter:rope"}, request=request
        )
    assert 'id="nl-chapter-email"' in html
    assert 'hx-target="#nl-chapter-result"' in html
    assert 'name="source" value="chapter:rope"' in html
    assert 'action="/newsletter/"' in html


def test_subscribe_page_and_plain_post_work_without_htmx(client):
    page = client.get(SUBSCRIBE)
    assert page.status_code == 200
    assert 'id="nl-page-email"' in page.content.decode()
    response = client.post(SUBSCRIBE, {"email": "plain@example.com", "source": "footer"})
    assert response.status_code == 200
    assert "<html" in response.content.decode()
    assert 'data-outcome="sent"' in response.content.decode()


def test_subscribe_limit_per_ip_ignores_spoofed_x_forwarded_for(client, settings):
    settings.NEWSLETTER_SIGNUP_LIMIT_PER_IP = 2
    codes = [
        client.post(
            SUBSCRIBE, {"email": f"p{i}@example.com"}, HTTP_X_FORWARDED_FOR=f"203.0.113.{i}"
        ).status_code
        for i in range(3)
    ]
    assert codes == [200, 200, 429]


def test_subscribe_limit_per_ip_behind_a_trusted_proxy_counts_each_client(client, settings):
    """The same client-IP rule as the login limits: behind one proxy, the rightmost
    X-Forwarded-For entry is the client, so the world does not share one allowance."""
    settings.NEWSLETTER_SIGNUP_LIMIT_PER_IP = 2
    settings.ALLAUTH_TRUSTED_PROXY_COUNT = 1

    def sign_up(i: int, xff: str) -> int:
        return client.post(
            SUBSCRIBE,
            {"email": f"p{i}@example.com"},
            REMOTE_ADDR="10.0.0.1",  # the proxy
            HTTP_X_FORWARDED_FOR=xff,
        ).status_code

    assert [sign_up(i, f"203.0.113.{i}") for i in range(5)] == [200] * 5
    spoofing = [sign_up(10 + i, f"192.0.2.{i}, 198.51.100.9") for i in range(3)]
    assert spoofing == [200, 200, 429]


def test_subscribe_that_skipped_the_trusted_proxies_is_refused(client, settings):
    settings.ALLAUTH_TRUSTED_PROXY_COUNT = 2
    response = client.post(
        SUBSCRIBE, {"email": "p@example.com"}, HTTP_X_FORWARDED_FOR="203.0.113.1"
    )
    assert response.status_code == 403
    assert Subscriber.objects.count() == 0


def test_confirmation_links_come_from_site_url_not_the_host_header(client, settings):
    settings.SITE_URL = "https://fromscratch.example"
    client.post(SUBSCRIBE, {"email": "ada@example.com"}, HTTP_HOST="127.0.0.1:31337")
    message = mail.outbox[0]
    bodies = [message.body, *(content for content, _ in message.alternatives)]
    urls = [url for body in bodies for url in re.findall(r"https?://[^\s\"'<>]+", body)]
    assert any("/newsletter/confirm/" in url for url in urls)
    site = "https://fromscratch.example"
    assert all(url == site or url.startswith(site + "/") for url in urls), urls

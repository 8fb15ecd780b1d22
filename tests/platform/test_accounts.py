"""Accounts through the test client: sign-up with verification, reset, limits, deletion."""

import re

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.urls import reverse

User = get_user_model()
LINK = re.compile(r"http://testserver(/accounts/[^\s]+/)")


def _link_from(mail) -> str:
    match = LINK.search(mail.body)
    assert match, mail.body
    return match.group(1)


@pytest.mark.django_db
def test_signup_journey_verifies_email_then_logs_in(client, mailoutbox, password):
    response = client.post(
        reverse("account_signup"),
        {"email": "new@example.com", "password1": password, "password2": password},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("account_email_verification_sent")
    assert "_auth_user_id" not in client.session
    assert len(mailoutbox) == 1
    assert mailoutbox[0].to == ["new@example.com"]

    confirm_url = _link_from(mailoutbox[0])
    assert client.get(confirm_url).status_code == 200
    assert client.post(confirm_url).status_code == 302
    assert EmailAddress.objects.get(email="new@example.com").verified is True

    response = client.post(
        reverse("account_login"), {"login": "new@example.com", "password": password}
    )
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(User.objects.get(email="new@example.com").pk)


@pytest.mark.django_db
def test_signup_unverified_account_cannot_log_in(client, mailoutbox, password):
    client.post(
        reverse("account_signup"),
        {"email": "slow@example.com", "password1": password, "password2": password},
    )
    client.logout()
    response = client.post(
        reverse("account_login"), {"login": "slow@example.com", "password": password}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("account_email_verification_sent")
    assert "_auth_user_id" not in client.session
    assert len(mailoutbox) == 1  # a resend waits for the cooldown; no session either way


@pytest.mark.django_db
def test_signup_existing_address_does_not_reveal_account(client, learner, mailoutbox, password):
    response = client.post(
        reverse("account_signup"),
        {"email": learner.email, "password1": password, "password2": password},
    )
    # The same redirect as a new address; the owner is told by mail instead.
    assert response.status_code == 302
    assert response["Location"] == reverse("account_email_verification_sent")
    assert User.objects.filter(email=learner.email).count() == 1
    assert mailoutbox[0].to == [learner.email]


@pytest.mark.django_db
def test_password_reset_by_email_end_to_end(client, learner, mailoutbox):
    response = client.post(reverse("account_reset_password"), {"email": learner.email})
    assert response.status_code == 302
    reset_url = _link_from(mailoutbox[0])
    response = client.get(reset_url)
    assert response.status_code == 302  # allauth moves the key into the session
    set_password_url = response["Location"]
    new_password = "a brand new passphrase 77"
    response = client.post(set_password_url, {"password1": new_password, "password2": new_password})
    assert response.status_code == 302
    learner.refresh_from_db()
    assert learner.check_password(new_password)
    response = client.post(
        reverse("account_login"), {"login": learner.email, "password": new_password}
    )
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(learner.pk)


@pytest.mark.django_db
def test_password_reset_unknown_address_answers_the_same(client, mailoutbox):
    response = client.post(reverse("account_reset_password"), {"email": "nobody@example.com"})
    assert response.status_code == 302
    assert response["Location"] == reverse("account_reset_password_done")


@pytest.mark.django_db
def test_login_repeated_wrong_passwords_get_429_before_eleventh_try(client, learner, password):
    statuses = [
        client.post(
            reverse("account_login"), {"login": learner.email, "password": f"wrong {i}"}
        ).status_code
        for i in range(10)
    ]
    assert statuses[0] == 200
    assert 429 in statuses
    first_refusal = statuses.index(429)
    assert all(status == 429 for status in statuses[first_refusal:])
    # Even the right password is refused while the limit holds.
    response = client.post(reverse("account_login"), {"login": learner.email, "password": password})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_admin_login_repeated_wrong_passwords_get_429(client, editor, password):
    url = reverse("admin:login")
    statuses = [
        client.post(url, {"username": editor.username, "password": f"wrong {i}"}).status_code
        for i in range(10)
    ]
    assert statuses[0] == 200
    assert 429 in statuses
    response = client.post(url, {"username": editor.username, "password": password})
    assert response.status_code == 429


@pytest.mark.django_db
def test_admin_login_works_for_staff_editor(client, editor, password):
    response = client.post(
        reverse("admin:login"), {"username": editor.username, "password": password}
    )
    assert response.status_code == 302
    assert client.get(reverse("admin:index")).status_code == 200


@pytest.mark.django_db
def test_passwords_are_hashed_with_argon2(learner):
    assert learner.password.startswith("argon2$")


@pytest.mark.django_db
def test_account_page_needs_login(client):
    response = client.get(reverse("account"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


@pytest.mark.django_db
def test_account_page_shows_email_and_delete_link(learner_client, learner):
    response = learner_client.get(reverse("account"))
    assert response.status_code == 200
    body = response.content.decode()
    assert learner.email in body
    assert reverse("account_delete") in body
    assert "Newsletter" in body


@pytest.mark.django_db
def test_account_delete_with_wrong_password_keeps_account(learner_client, learner):
    response = learner_client.post(reverse("account_delete"), {"password": "nope", "confirm": "on"})
    assert response.status_code == 400
    assert "That is not your password." in response.content.decode()
    assert User.objects.filter(pk=learner.pk).exists()


@pytest.mark.django_db
def test_account_delete_with_password_removes_user_and_data(learner_client, learner, password):
    response = learner_client.post(
        reverse("account_delete"), {"password": password, "confirm": "on"}
    )
    assert response.status_code == 302
    assert not User.objects.filter(pk=learner.pk).exists()
    assert not EmailAddress.objects.filter(email=learner.email).exists()
    assert "_auth_user_id" not in learner_client.session


@pytest.mark.django_db
def test_account_delete_refuses_get_without_csrf_post(client, learner, password):
    csrf_client = type(client)(enforce_csrf_checks=True)
    csrf_client.force_login(learner)
    response = csrf_client.post(reverse("account_delete"), {"password": password, "confirm": "on"})
    assert response.status_code == 403
    assert User.objects.filter(pk=learner.pk).exists()

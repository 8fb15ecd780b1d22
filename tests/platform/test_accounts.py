"""Accounts through the test client: sign-up with verification, reset, limits, deletion."""

import re

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.urls import reverse

User = get_user_model()


def _link_from(mail) -> str:
    """The path of the account link in ``mail``, which must start with SITE_URL."""
    from django.conf import settings

    match = re.search(re.escape(settings.SITE_URL) + r"(/accounts/[^\s]+/)", mail.body)
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


# --- one failed-login counter per account (site login, admin login, account deletion) ----------


def _site_login(client, login, password, ip):
    return client.post(
        reverse("account_login"), {"login": login, "password": password}, REMOTE_ADDR=ip
    )


def _admin_login(client, login, password, ip):
    return client.post(
        reverse("admin:login"), {"username": login, "password": password}, REMOTE_ADDR=ip
    )


def _spellings(user) -> dict[str, str]:
    return {
        "email": user.email,
        "EMAIL": user.email.upper(),
        "username": user.username,
        "USERNAME": user.username.upper(),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", ["email", "EMAIL", "username", "USERNAME"])
def test_admin_login_failures_count_toward_the_site_login(client, editor, password, spelling):
    login = _spellings(editor)[spelling]
    statuses = [
        _admin_login(client, login, f"wrong {i}", f"10.1.0.{i}").status_code for i in range(5)
    ]
    assert statuses == [200] * 5
    assert _admin_login(client, login, password, "10.1.0.9").status_code == 429
    response = _site_login(client, editor.email, password, "10.1.0.10")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", ["email", "EMAIL", "username", "USERNAME"])
def test_site_login_failures_count_toward_the_admin_login(client, editor, password, spelling):
    for i in range(5):
        assert _site_login(client, editor.email.title(), f"wrong {i}", f"10.2.0.{i}").status_code
    login = _spellings(editor)[spelling]
    response = _admin_login(client, login, password, "10.2.0.9")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_login_counter_of_one_account_leaves_others_alone(client, editor, learner, password):
    for i in range(5):
        _admin_login(client, editor.username, f"wrong {i}", f"10.3.0.{i}")
    assert _site_login(client, learner.email, password, "10.3.0.9").status_code == 302


@pytest.mark.django_db
def test_account_delete_password_check_is_rate_limited_with_the_login(
    learner_client, learner, password
):
    url = reverse("account_delete")
    statuses = [
        learner_client.post(
            url, {"password": f"wrong {i}", "confirm": "on"}, REMOTE_ADDR=f"10.4.0.{i}"
        ).status_code
        for i in range(5)
    ]
    assert statuses == [400] * 5
    response = learner_client.post(
        url, {"password": password, "confirm": "on"}, REMOTE_ADDR="10.4.0.9"
    )
    assert response.status_code == 429
    assert "Too many failed login attempts" in response.content.decode()
    assert User.objects.filter(pk=learner.pk).exists()
    anonymous = type(learner_client)()
    assert _site_login(anonymous, learner.email, password, "10.4.0.10").status_code == 429


@pytest.mark.django_db
def test_login_failures_count_toward_the_account_delete_check(learner_client, learner, password):
    anonymous = type(learner_client)()
    for i in range(5):
        _site_login(anonymous, learner.email, f"wrong {i}", f"10.5.0.{i}")
    response = learner_client.post(
        reverse("account_delete"), {"password": password, "confirm": "on"}, REMOTE_ADDR="10.5.0.9"
    )
    assert response.status_code == 429
    assert User.objects.filter(pk=learner.pk).exists()


@pytest.mark.django_db
def test_account_delete_with_password_after_a_few_failures_still_works(
    learner_client, learner, password
):
    url = reverse("account_delete")
    for i in range(3):
        learner_client.post(url, {"password": f"wrong {i}", "confirm": "on"})
    response = learner_client.post(url, {"password": password, "confirm": "on"})
    assert response.status_code == 302
    assert not User.objects.filter(pk=learner.pk).exists()


# --- one client-IP rule ------------------------------------------------------------------------


@pytest.mark.django_db
def test_login_limit_per_address_ignores_x_forwarded_for_by_default(client, db):
    """With no trusted proxy, a spoofed X-Forwarded-For changes nothing: REMOTE_ADDR counts."""
    statuses = [
        client.post(
            reverse("account_login"),
            {"login": f"nobody{i}@example.com", "password": "wrong"},
            REMOTE_ADDR="198.51.100.7",
            HTTP_X_FORWARDED_FOR=f"203.0.113.{i}",
        ).status_code
        for i in range(11)
    ]
    assert statuses == [200] * 10 + [429]


@pytest.mark.django_db
def test_login_limit_per_address_behind_one_trusted_proxy(client, settings):
    """Behind one proxy, the client is the rightmost X-Forwarded-For entry: not everyone is
    locked out together, and what a client writes to the left of it is ignored."""
    settings.ALLAUTH_TRUSTED_PROXY_COUNT = 1

    def attempt(i: int, xff: str) -> int:
        return client.post(
            reverse("account_login"),
            {"login": f"nobody{i}@example.com", "password": "wrong"},
            REMOTE_ADDR="10.0.0.1",  # the proxy
            HTTP_X_FORWARDED_FOR=xff,
        ).status_code

    # Twelve clients, one failure each, all through the proxy: nobody is limited.
    assert [attempt(i, f"203.0.113.{i}") for i in range(12)] == [200] * 12
    # One client rotating a spoofed left-hand entry is still one client.
    statuses = [attempt(100 + i, f"192.0.2.{i}, 198.51.100.50") for i in range(11)]
    assert statuses == [200] * 10 + [429]


# --- every absolute URL in email from SITE_URL -------------------------------------------------

EVIL_HOST = "127.0.0.1:31337"


@pytest.fixture
def site_url(settings):
    settings.SITE_URL = "https://fromscratch.example"
    return settings.SITE_URL


def _urls(message) -> list[str]:
    bodies = [message.body, *(content for content, _ in getattr(message, "alternatives", []))]
    return [url for body in bodies for url in re.findall(r"https?://[^\s\"'<>]+", body)]


def _assert_links_from_site_url(message, site_url, expected_path: str) -> None:
    urls = _urls(message)
    assert urls, message.body
    assert all(url.startswith(site_url + "/") for url in urls), urls
    assert any(url.startswith(site_url + expected_path) for url in urls), urls
    assert "31337" not in message.body


@pytest.mark.django_db
def test_password_reset_link_comes_from_site_url_not_host(client, learner, mailoutbox, site_url):
    response = client.post(
        reverse("account_reset_password"), {"email": learner.email}, HTTP_HOST=EVIL_HOST
    )
    assert response.status_code == 302
    _assert_links_from_site_url(mailoutbox[0], site_url, "/accounts/password/reset/key/")


@pytest.mark.django_db
def test_password_reset_mail_for_unknown_address_links_to_site_url(client, mailoutbox, site_url):
    client.post(
        reverse("account_reset_password"), {"email": "nobody@example.com"}, HTTP_HOST=EVIL_HOST
    )
    assert len(mailoutbox) == 1
    _assert_links_from_site_url(mailoutbox[0], site_url, "/accounts/signup/")


@pytest.mark.django_db
def test_verification_link_comes_from_site_url_not_host(client, mailoutbox, password, site_url):
    client.post(
        reverse("account_signup"),
        {"email": "new@example.com", "password1": password, "password2": password},
        HTTP_HOST=EVIL_HOST,
    )
    _assert_links_from_site_url(mailoutbox[0], site_url, "/accounts/confirm-email/")


@pytest.mark.django_db
def test_existing_account_mail_links_come_from_site_url(
    client, learner, mailoutbox, password, site_url
):
    client.post(
        reverse("account_signup"),
        {"email": learner.email, "password1": password, "password2": password},
        HTTP_HOST=EVIL_HOST,
    )
    _assert_links_from_site_url(mailoutbox[0], site_url, "/accounts/password/reset/")


@pytest.mark.django_db
def test_site_domain_follows_site_url(settings):
    from django.apps import apps
    from django.contrib.sites.models import Site

    from platform.apps import sync_site_domain

    settings.SITE_URL = "https://fromscratch.example:8443"
    sync_site_domain(sender=apps.get_app_config("platform"))
    Site.objects.clear_cache()
    assert Site.objects.get_current().domain == "fromscratch.example:8443"


# --- pages in the site's words, errors under their fields, next kept, mails by what was typed --


def _field_block(html: str, name: str) -> str:
    """The markup of one field's wrapper, from its ``<div class="field`` to the next one."""
    start = html.index(f'name="{name}"')
    begin = html.rindex('<div class="field', 0, start)
    end = html.find('<div class="field', start)
    end = html.find("</form>", start) if end == -1 else end
    return html[begin:end]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url_name", "heading", "button"),
    [
        ("account_login", "<h1>Log in</h1>", ">Log in</button>"),
        ("account_signup", "<h1>Sign up</h1>", ">Sign up</button>"),
        ("account_reset_password", "<h1>Reset your password</h1>", ">Send me a link</button>"),
    ],
)
def test_account_pages_use_the_site_words(client, url_name, heading, button):
    response = client.get(reverse(url_name))
    body = response.content.decode()
    assert response.status_code == 200
    assert heading in body
    assert button in body
    assert 'class="site-header"' in body  # inside the site's layout
    for stock in ("Sign In", "Sign Up", "Sign Out", "Signup", "sign in"):
        assert stock not in body


@pytest.mark.django_db
def test_login_page_offers_reset_once_and_plain_remember_label(client):
    body = client.get(reverse("account_login")).content.decode()
    assert body.count(f'href="{reverse("account_reset_password")}"') == 1
    assert '<label for="id_remember">Keep me logged in on this device</label>' in body
    assert "Remember Me" not in body


@pytest.mark.django_db
def test_logout_page_says_log_out(learner_client):
    body = learner_client.get(reverse("account_logout")).content.decode()
    assert "<h1>Log out</h1>" in body
    assert "Sign Out" not in body


@pytest.mark.django_db
def test_signup_errors_sit_under_their_own_fields(client):
    response = client.post(
        reverse("account_signup"),
        {"email": "not an address", "password1": "short", "password2": "different"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    email, first, second = (_field_block(html, n) for n in ("email", "password1", "password2"))
    assert 'aria-invalid="true"' in email
    assert 'aria-describedby="id_email_error"' in email
    assert '<ul class="errorlist" id="id_email_error"><li>Enter a valid email address.' in email
    assert email.index('name="email"') < email.index('id="id_email_error"')
    assert 'id="id_password1_error"' in first
    assert "This password is too short." in first
    assert "This password is too short." not in email + second
    assert 'aria-invalid="true"' in second
    assert "The two passwords differ; type the same one twice." in second
    assert "differ" not in email + first


@pytest.mark.django_db
def test_signup_mismatch_of_good_passwords_is_shown_on_the_second(client, password):
    response = client.post(
        reverse("account_signup"),
        {"email": "a@example.com", "password1": password, "password2": password + "x"},
    )
    html = response.content.decode()
    second = _field_block(html, "password2")
    assert html.count("You must type the same password each time.") == 1
    assert "You must type the same password each time." in second
    assert 'aria-describedby="id_password2_error"' in second
    assert 'aria-invalid="true"' not in _field_block(html, "password1")


@pytest.mark.django_db
def test_login_failure_is_a_form_error_at_the_top(client, learner):
    response = client.post(reverse("account_login"), {"login": learner.email, "password": "no"})
    html = response.content.decode()
    alert = html.index('<div class="form-errors" role="alert">')
    assert alert < html.index('name="login"')
    assert "The email address and/or password you specified are not correct." in html[alert:]
    assert "not correct" not in _field_block(html, "password")


@pytest.mark.django_db
def test_chapter_links_carry_next_and_confirmation_returns_there(client, mailoutbox, password):
    from urllib.parse import urlencode

    from tests.courses.factories import ChapterFactory

    chapter = ChapterFactory()
    page = chapter.get_absolute_url()
    html = client.get(page).content.decode()
    signup = reverse("account_signup") + "?" + urlencode({"next": page}, safe="/")
    assert f'href="{signup}"' in html
    assert f'href="{reverse("account_login")}?{urlencode({"next": page}, safe="/")}"' in html

    login_page = client.get(reverse("account_login"), {"next": page}).content.decode()
    assert f'href="{reverse("account_signup")}?{urlencode({"next": page})}"' in login_page
    form = client.get(signup).content.decode()
    assert f'<input type="hidden" name="next" value="{page}">' in form
    assert f'href="{reverse("account_login")}?{urlencode({"next": page})}"' in form
    response = client.post(
        reverse("account_signup"),
        {"email": "Reader@Example.com", "password1": password, "password2": password, "next": page},
    )
    assert response["Location"] == reverse("account_email_verification_sent")
    assert "_auth_user_id" not in client.session

    confirm_url = _link_from(mailoutbox[0])
    assert "Confirm my email" in client.get(confirm_url).content.decode()
    response = client.post(confirm_url)
    assert response.status_code == 302
    assert response["Location"] == page
    assert client.session["_auth_user_id"] == str(User.objects.get().pk)
    assert client.get(page).context["user"].email == "reader@example.com"


@pytest.mark.django_db
def test_confirmation_in_another_browser_confirms_but_asks_to_log_in(client, mailoutbox, password):
    client.post(
        reverse("account_signup"),
        {"email": "other@example.com", "password1": password, "password2": password},
    )
    elsewhere = type(client)()
    response = elsewhere.post(_link_from(mailoutbox[0]))
    assert response.status_code == 302
    assert response["Location"] == reverse("account_login")
    assert "_auth_user_id" not in elsewhere.session
    assert EmailAddress.objects.get(email="other@example.com").verified is True


@pytest.mark.django_db
def test_verification_mail_names_the_address_not_a_username(client, mailoutbox, password, settings):
    settings.SITE_URL = "https://fromscratch.example"
    client.post(
        reverse("account_signup"),
        {"email": "ada.l@example.com", "password1": password, "password2": password},
    )
    user = User.objects.get()
    message = mailoutbox[0]
    assert message.subject == "[From Scratch] Confirm your email address"
    assert message.body.startswith("Hello ada.l@example.com,\n\n")
    assert "an account on fromscratch.example." in message.body
    assert message.body.rstrip().endswith("— From Scratch\nhttps://fromscratch.example/")
    assert user.username not in message.body.replace("ada.l@example.com", "")
    assert "example.com." not in message.body.replace("ada.l@example.com", "")


@pytest.mark.django_db
def test_password_reset_mail_does_not_print_the_generated_username(client, learner, mailoutbox):
    client.post(reverse("account_reset_password"), {"email": learner.email})
    body = mailoutbox[0].body
    assert body.startswith(f"Hello {learner.email},")
    assert "username" not in body
    assert mailoutbox[0].subject == "[From Scratch] Reset your password"


@pytest.mark.django_db
def test_logged_in_message_does_not_show_the_username(client, learner, password):
    response = client.post(
        reverse("account_login"), {"login": learner.email, "password": password}, follow=True
    )
    messages = [str(m) for m in response.context["messages"]]
    assert messages == ["You are logged in."]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url_name", "heading"),
    [
        ("account_email", "<h1>Your email address</h1>"),
        ("account_change_password", "<h1>Change your password</h1>"),
        ("account_logout", "<h1>Log out</h1>"),
    ],
)
def test_manage_pages_in_site_layout_without_inline_style_or_script(
    learner_client, url_name, heading
):
    response = learner_client.get(reverse(url_name))
    body = response.content.decode()
    assert response.status_code == 200
    assert heading in body
    assert " style=" not in body
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", body) == []


@pytest.mark.django_db
def test_email_change_shows_the_pending_address_with_a_hidden_form(
    learner_client, learner, mailoutbox
):
    response = learner_client.post(
        reverse("account_email"), {"action_add": "", "email": "new.address@example.com"}
    )
    assert response.status_code == 302
    body = learner_client.get(reverse("account_email")).content.decode()
    assert "new.address@example.com" in body
    assert '<form id="pending-email" method="post" action="/accounts/email/" hidden>' in body
    assert mailoutbox[-1].body.startswith("Hello new.address@example.com,")

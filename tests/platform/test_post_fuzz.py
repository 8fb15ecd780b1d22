"""Every form that POSTs, fuzzed: hostile input gets a 2xx/3xx/4xx, never a 5xx.

The forms are not listed by hand. Every URL pattern of the site (admin apart from its login and
logout) is reversed with real objects, fetched, and each ``<form method="post">`` on it is
collected with its fields; every pattern that does not answer an empty POST with 405 must be
reached by at least one such form, so a new POST endpoint cannot escape. Each form is then
posted as an anonymous visitor and as a signed-in learner with: its own defaults (a plausible
address and password where the page has none), nothing, every field sent twice, every field set
to each hostile value (over-long, markup, NUL bytes, numbers of the wrong kind, path traversal,
TeX that tries to close the MathML), each field alone missing or hostile while the others stay
plausible, ids that belong to another learner, chapter or draft, URLs naming another chapter's
equation or a draft, an undecodable body, JSON and a file. A 400 must say what was wrong.
Rate limits are off here (they answer 429 before a form is read; they have their own tests).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from allauth.account.forms import default_token_generator
from allauth.account.models import EmailAddress, EmailConfirmationHMAC
from allauth.account.utils import user_pk_to_url_str
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

from courses.models import Equation, Question, ReviewCard, ReviewReminder, Walkthrough
from courses.tokens import reminder_token
from newsletter import tokens
from tests.courses.factories import (
    ChapterFactory,
    EquationFactory,
    QuestionFactory,
    ReviewCardFactory,
    build_course,
)
from tests.factories import UserFactory
from tests.newsletter.factories import IssueFactory, SubscriberFactory
from tests.notebook.factories import NoteFactory, TopicFactory

pytestmark = pytest.mark.django_db

HOSTILE = [
    "",
    "x" * 20_000,
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "\x00",
    "a\x00b",
    "-1",
    "99999999999999999999999999",
    "1e309",
    "NaN",
    "../../../../etc/passwd",
    "' OR '1'='1' --",
    "\u202e\ufeff\U0001d54f",
    r"\text{</mtext></math><h2>Fake</h2>}",
]
# Each field alone gets these while the others keep plausible values (a valid address and
# the rest), which is how a bad hidden field behind a good email once reached a 500.
ONE_FIELD = ["x" * 20_000, '<b>"\x00', "1e309", "-1"]
PLAUSIBLE = {"email": "fuzz-new@example.com", "password": "Fuzz passphrase 9071"}
# Fields that carry ids: they also get ids of objects that are not the learner's or the page's.
ID_FIELD = re.compile(r"^(q\d+|part-\d+|only|choice|equation|walkthrough|.*_id|id|pk)$")
# Patterns that take a POST but have no form on any page the fuzz can see: feeds (any method,
# the body ignored), allauth's login-by-code and set-password flows (not enabled here, or not
# for an account with a password), the admin's logout (on staff pages only) and the account
# page's unsubscribe button (shown to subscribers). They are fuzzed with these fields.
FORMLESS_POST = {
    "notebook:feed_rss",
    "notebook:feed_atom",
    "notebook:topic_feed_rss",
    "notebook:topic_feed_atom",
    "newsletter:feed",
    "account_confirm_login_code",
    "account_confirm_reauthentication_code",
    "account_set_password",
    "admin:logout",
    "newsletter:account_unsubscribe",
    "newsletter:anymail_tracking",  # the ESP's webhook (tests/newsletter/test_bounces.py)
}
FORMLESS_FIELDS = {"code": [""], "password1": [""], "password2": [""]}
# Hosts of 400 messages: Django's error lists and the site's own feedback blocks.
ERROR_MARK = re.compile(r'class="[^"]*(errorlist|feedback-bad|error|invalid)|role="alert"')


@dataclass
class Form:
    page: str
    action: str
    fields: dict[str, list[str]] = field(default_factory=dict)


class _Forms(HTMLParser):
    """Every POST form of a page with its fields and their default values."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.page = page
        self.forms: list[Form] = []
        self._form: Form | None = None
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = {name: value or "" for name, value in attrs}
        if tag == "form":
            method = (a.get("method") or (a.get("hx-post") and "post") or "get").lower()
            action = a.get("hx-post") or a.get("action") or self.page
            self._form = Form(self.page, action) if method == "post" else None
            return
        form, name = self._form, a.get("name")
        if form is None or not name:
            return
        values = form.fields.setdefault(name, [])
        if tag == "input":
            kind = a.get("type", "text").lower()
            if kind in {"checkbox", "radio"}:
                if not values:
                    values.append(a.get("value", "on"))
            elif kind not in {"submit", "button", "image", "reset", "file"}:
                values[:] = [a.get("value") or PLAUSIBLE.get(kind, "")]
        elif tag == "select":
            self._select = name
        elif tag == "option" and self._select and not form.fields[self._select]:
            form.fields[self._select].append(a.get("value", ""))
        elif tag == "textarea":
            self._textarea = name
            values[:] = [""]
        elif tag == "button" and a.get("value") is not None:
            values[:] = [a["value"]]

    def handle_data(self, data):
        if self._form is not None and self._textarea:
            self._form.fields[self._textarea] = [data]

    def handle_endtag(self, tag):
        if tag == "form" and self._form is not None:
            self.forms.append(self._form)
            self._form = None
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None


def _patterns(resolver=None, prefix: str = "", namespace: str = "") -> Iterator[tuple]:
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}:{entry.namespace}" if entry.namespace else namespace
            yield from _patterns(entry, prefix + str(entry.pattern), inner.strip(":"))
        elif isinstance(entry, URLPattern) and entry.name:
            name = f"{namespace}:{entry.name}" if namespace else entry.name
            yield prefix + str(entry.pattern), name, entry.pattern.regex.groupindex


def _route_name(url: str) -> str:
    return resolve(urlsplit(url).path).view_name


@pytest.fixture
def world(settings):
    """Real objects for every URL parameter, plus objects a learner must not reach."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Rate limits would answer 429 before the form is read; they have tests of their own.
    settings.ACCOUNT_RATE_LIMITS = False
    settings.NEWSLETTER_SIGNUP_LIMIT_PER_IP = settings.NEWSLETTER_SIGNUP_LIMIT_PER_ADDRESS = 10**6
    learner = UserFactory(email="fuzz-learner@example.com")
    outsider = UserFactory(email="fuzz-outsider@example.com")
    unverified = UserFactory(email="fuzz-unverified@example.com", verified=False)
    chapter = build_course(2)
    other = build_course(1, user=outsider)  # questions, parts and walkthroughs of someone else
    draft = ChapterFactory(course=chapter.course, published=False, order=99)
    draft_equation = EquationFactory(chapter=draft, widget="")
    QuestionFactory(chapter=draft)
    note = NoteFactory(topics=[TopicFactory(slug="fuzz-topic")])
    issue = IssueFactory(status="sent")
    subscriber = SubscriberFactory(email="fuzz-sub@example.com", status="pending")
    gone = SubscriberFactory(email="fuzz-gone@example.com", status="unsubscribed")
    address = EmailAddress.objects.create(
        user=unverified, email=unverified.email, primary=True, verified=False
    )
    equation = Equation.objects.filter(chapter=chapter).order_by("order").first()
    listing = chapter.listings.order_by("order").first()
    # A due review card (the review page shows its form) and reminders on (the turn-off page
    # shows its button).
    card = ReviewCardFactory(user=learner, question=chapter.questions.first())
    ReviewReminder.objects.create(user=learner, enabled=True)
    outsider_card = ReviewCard.objects.filter(user=outsider).first()
    foreign_ids = sorted(
        {
            *Walkthrough.objects.filter(user=outsider).values_list("pk", flat=True)[:1],
            *Question.objects.filter(chapter=other).values_list("pk", flat=True)[:1],
            *Question.objects.filter(chapter=other).values_list("choices__pk", flat=True)[:1],
            draft_equation.pk,
            *Question.objects.filter(chapter=draft).values_list("pk", flat=True)[:1],
        }
    )
    kwargs = {
        "course_slug": chapter.course.slug,
        "chapter_slug": chapter.slug,
        "equation_id": equation.pk,
        "listing_id": listing.pk,
        "slug": note.slug,
        "pk": issue.pk,
        "token": tokens.confirmation_token(subscriber),
        "key": EmailConfirmationHMAC(address).key,
        "uidb36": user_pk_to_url_str(learner),
        "esp": "postmark",
        "card_id": card.pk,
    }
    reset_url = reverse(
        "account_reset_password_from_key",
        kwargs={"uidb36": kwargs["uidb36"], "key": default_token_generator.make_token(learner)},
    )
    # URL parameters a learner should not be able to use: another chapter's equation, a draft.
    foreign_urls = [
        reverse("courses:label", args=[chapter.course.slug, chapter.slug, draft_equation.pk]),
        reverse("courses:label", args=[other.course.slug, other.slug, equation.pk]),
        reverse("courses:check", args=[draft.course.slug, draft.slug]),
        reverse("courses:finish", args=[draft.course.slug, draft.slug]),
        reverse("courses:check", args=["no-such-course", "no-such-chapter"]),
        reverse("newsletter:unsubscribe", args=["not-a-token"]) + "resubscribe/",
        reverse("newsletter:confirm", args=["x" * 500]),
        reverse("review:answer", args=[outsider_card.pk]),
    ]
    unsubscribe_pending = {"token": tokens.unsubscribe_token(subscriber)}
    return {
        "learner": learner,
        "kwargs": kwargs,
        "route_kwargs": {
            "newsletter:unsubscribe": unsubscribe_pending,
            "newsletter:resubscribe": unsubscribe_pending,
            "review:reminders_off": {"token": reminder_token(learner)},
        },
        "reset_url": reset_url,
        "unsubscribe": reverse("newsletter:unsubscribe", args=[tokens.unsubscribe_token(gone)]),
        "foreign_ids": [str(pk) for pk in foreign_ids],
        "foreign_urls": foreign_urls,
        "chapter": chapter,
    }


def _site_urls(world) -> dict[str, str]:
    """Every named pattern (admin: login and logout only) reversed with the world's objects."""
    urls = {}
    for route, name, groups in _patterns():
        if route.startswith("admin/"):
            continue
        kwargs = {**world["kwargs"], **world["route_kwargs"].get(name, {})}
        urls[name] = reverse(name, kwargs={g: kwargs[g] for g in groups})
    urls["admin:login"] = reverse("admin:login")
    urls["admin:logout"] = reverse("admin:logout")
    return urls


def _client(world, *, learner: bool) -> Client:
    client = Client(raise_request_exception=False)  # a 500 is collected, not raised
    if learner:
        client.force_login(world["learner"], "django.contrib.auth.backends.ModelBackend")
    return client


def _harvest(world, *, learner: bool) -> list[Form]:
    client = _client(world, learner=learner)
    pages = list(_site_urls(world).values())
    pages += [
        world["reset_url"],
        world["unsubscribe"],  # an unsubscribed address: the page offers to re-subscribe
        reverse("widgets:walkthrough") + "?latex=x%5E2",
        reverse("widgets:walkthrough") + f"?equation={world['chapter'].equations.first().pk}",
    ]
    forms = []
    for page in pages:
        response = client.get(page, follow=True)
        final = response.redirect_chain[-1][0] if response.redirect_chain else page
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        parts = urlsplit(final)
        parser = _Forms(parts.path + (f"?{parts.query}" if parts.query else ""))
        parser.feed(response.content.decode())
        forms += [f for f in parser.forms if f.action.startswith("/")]
    return forms


def _requests(form: Form, foreign_ids: list[str]) -> Iterator[tuple[str, dict, dict]]:
    """(label, data, extra) for one form: defaults, nothing, hostile values, swaps."""
    base = {name: values for name, values in form.fields.items() if name}
    fields = [name for name in base if name != "csrfmiddlewaretoken"]
    yield "defaults", base, {}
    yield "nothing", {}, {}
    yield "every field twice", {**base, **{n: ["1", "<b>2</b>"] for n in fields}}, {}
    for i, value in enumerate(HOSTILE):
        htmx = {"HTTP_HX_REQUEST": "true"} if i % 2 else {}
        yield f"all={value[:20]!r}", {**base, **dict.fromkeys(fields, value)}, htmx
    for name in fields:
        yield f"without {name}", {k: v for k, v in base.items() if k != name}, {}
        for value in ONE_FIELD:
            yield f"{name}={value[:20]!r}", {**base, name: value}, {}
        if ID_FIELD.match(name):
            for pk in foreign_ids:
                yield f"{name}={pk} (not theirs)", {**base, name: pk}, {}
    yield "an extra foreign answer", {**base, f"q{foreign_ids[0]}": foreign_ids[-1]}, {}


def _post(client, url: str, data: dict, extra: dict, n: int):
    ip = f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"  # per-address limits stay out of it
    return client.post(url, data, REMOTE_ADDR=ip, **extra)


def _raw_posts(client, url: str, form: Form, n: int):
    """Bodies a browser would not send: undecodable bytes, JSON, a file where text goes."""
    ip = {"REMOTE_ADDR": f"10.254.{(n >> 8) & 255}.{n & 255}"}
    names = [name for name in form.fields if name != "csrfmiddlewaretoken"] or ["x"]
    body = "&".join(f"{name}=%FF%FE%C0%AF" for name in names)
    yield (
        "bad utf-8",
        client.post(url, body, content_type="application/x-www-form-urlencoded", **ip),
    )
    yield (
        "json",
        client.post(
            url, json.dumps(dict.fromkeys(names, "<b>")), content_type="application/json", **ip
        ),
    )
    upload = {name: SimpleUploadedFile("x.txt", b"\x00\xff" * 100) for name in names}
    yield "files", client.post(url, upload, **ip)


def _has_errors(value) -> bool:
    """allauth answers a JSON request with its form as JSON: some "errors" list is not empty."""
    if isinstance(value, dict):
        return bool(value.get("errors")) or any(_has_errors(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_errors(v) for v in value)
    return False


def _check(response, label: str, url: str, failures: list[str]) -> None:
    status = response.status_code
    if status >= 500:
        failures.append(f"{status} {url} [{label}]")
    elif status == 400:
        body = response.content.decode(errors="replace")
        if response.get("Content-Type", "").startswith("application/json"):
            explained = _has_errors(json.loads(body))
        else:
            explained = bool(ERROR_MARK.search(body))
        if not explained:
            failures.append(f"400 without a message: {url} [{label}] {body[:200]!r}")


def _forms_by_route(world) -> dict[str, Form]:
    """One POST form per route (the first seen), as an anonymous visitor and a learner see
    the site; fields of forms with the same target are merged."""
    by_action: dict[str, Form] = {}
    for learner in (False, True):
        for form in _harvest(world, learner=learner):
            by_action.setdefault(form.action, Form(form.page, form.action))
            by_action[form.action].fields.update(form.fields)
    by_route: dict[str, Form] = {}
    for action, form in by_action.items():
        by_route.setdefault(_route_name(action), form)
    return by_route


def _accepting_post(world) -> dict[str, str]:
    """Route name → URL of every pattern that does not answer a learner's empty POST with 405."""
    accepting = {}
    for name, url in _site_urls(world).items():
        client = _client(world, learner=True)
        if _post(client, url, {}, {}, 0).status_code != 405:
            accepting[name] = url
    return accepting


def test_every_pattern_that_takes_a_post_is_fuzzed(world):
    reached = set(_forms_by_route(world))  # first: the empty POSTs below confirm and log in
    accepting = set(_accepting_post(world))
    assert {"account_delete", "courses:check", "newsletter:subscribe"} <= accepting
    assert accepting - reached == FORMLESS_POST


def test_every_post_form_survives_hostile_input(world):
    targets = {form.action: form for form in _forms_by_route(world).values()}
    for name, url in _site_urls(world).items():
        if name in FORMLESS_POST:
            targets[url] = Form(url, url, dict(FORMLESS_FIELDS))
    template = next(f for f in targets.values() if _route_name(f.action) == "courses:label")
    foreign = {url: Form(url, url, dict(template.fields)) for url in world["foreign_urls"]}

    failures: list[str] = []
    counter = itertools.count(1)
    for as_learner in (False, True):
        role = "learner" if as_learner else "anonymous"
        for url, form in targets.items():
            client = _client(world, learner=as_learner)  # again: a logout must not end the run
            for label, data, extra in _requests(form, world["foreign_ids"]):
                response = _post(client, url, data, extra, next(counter))
                _check(response, f"{role}: {label}", url, failures)
            for label, response in _raw_posts(client, url, form, next(counter)):
                _check(response, f"{role}: {label}", url, failures)
        # URLs naming another chapter's equation, a draft, a bad token: a few posts each.
        for url, form in foreign.items():
            client = _client(world, learner=as_learner)
            for label, data, extra in itertools.islice(_requests(form, ["1"]), 4):
                response = _post(client, url, data, extra, next(counter))
                _check(response, f"{role}: {label}", url, failures)
    assert not failures, "\n".join(failures)

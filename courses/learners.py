"""Who is learning: a signed-in user, or an anonymous visitor known by a key in their session.

Anonymous learners' attempts and progress are stored like everyone else's but owned by a random
key kept in the session (``ANON_KEY``), never by anything that comes from the request body; when
they log in, ``services.merge_anonymous_progress`` hands those rows to the account.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

ANON_KEY = "courses_learner"
ANONYMOUS_SEED = "anonymous"


def learning_changed(user_id: int | None) -> None:
    """Say that a signed-in learner's answers, labels, progress or cards changed.

    Side effects: increments ``User.learning_rev`` (one UPDATE), which retires every page
    cached for them (``page_cache.learner_page_key``). Anonymous learners have no cached pages.
    """
    if user_id is None:
        return
    from django.contrib.auth import get_user_model
    from django.db.models import F

    get_user_model().objects.filter(pk=user_id).update(learning_rev=F("learning_rev") + 1)


def seed_of(learner: Learner | None) -> str:
    return learner.seed if learner is not None else ANONYMOUS_SEED


@dataclass(frozen=True)
class Learner:
    user_id: int | None = None
    anon_key: str = ""

    @property
    def seed(self) -> str:
        """What fixes the order of choices this learner sees (with the question's id).

        Signed-in learners each get their own order. Everyone not signed in shares one: the
        page of a reader without a session is cached and served to all of them, and an
        anonymous learner's first answer (which creates their key) must not reorder the
        choices they are looking at.
        """
        return f"user:{self.user_id}" if self.user_id is not None else ANONYMOUS_SEED

    def owner_fields(self) -> dict[str, Any]:
        """Field values that make a new row belong to this learner."""
        if self.user_id is not None:
            return {"user_id": self.user_id, "anon_key": ""}
        return {"user_id": None, "anon_key": self.anon_key}


def current_learner(request: HttpRequest, *, create: bool = False) -> Learner | None:
    """The learner behind the request; ``None`` for an anonymous reader who has done nothing.

    With ``create=True`` an anonymous visitor gets a key in their session (so their first answer
    can be saved). Reading pages never creates a session.
    """
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return Learner(user_id=user.pk)
    session = getattr(request, "session", None)
    if session is None:
        return None
    key = session.get(ANON_KEY)
    if not isinstance(key, str) or len(key) != 32:
        if not create:
            return None
        key = secrets.token_hex(16)
        session[ANON_KEY] = key
    return Learner(anon_key=key)

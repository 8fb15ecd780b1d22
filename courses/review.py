"""Spaced review with FSRS (the ``fsrs`` package, the scheduler Anki uses), and the rounds that
turn a learner's tries into one rating.

A *round* is one go at a card. It ends with a right answer, a second wrong answer or "Show me",
and gives FSRS one rating:

* right at the first try            → Good
* right after one wrong try         → Hard
* wrong twice, or "Show me"         → Again

After a first wrong try the round stays open (the learner may try again). So that a learner who
walks away then still gets the card back, the card already carries a provisional Again, and
``round_base`` keeps its state from before the round; closing the round reviews that state with
the final rating. Fuzzing is off: due dates are exactly what ``fsrs.Scheduler`` computes, which is
what the tests compare against.

Everything here changes ``ReviewCard`` objects in memory; ``services`` saves them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import fsrs
from fsrs.card import CardDict

from .models import ReviewCard

SCHEDULER = fsrs.Scheduler(enable_fuzzing=False)
Rating = fsrs.Rating

T = TypeVar("T")


def new_card_state(now: datetime) -> CardDict:
    """A fresh FSRS card, due ``now`` (``card_id`` 0: the row's id is what identifies it)."""
    return fsrs.Card(card_id=0, due=now).to_dict()


def due_of(state: CardDict) -> datetime:
    return fsrs.Card.from_dict(state).due


def _review(state: CardDict, rating: fsrs.Rating, now: datetime) -> CardDict:
    card, _log = SCHEDULER.review_card(fsrs.Card.from_dict(state), rating, now)
    return card.to_dict()


def _set_state(card: ReviewCard, state: CardDict) -> None:
    card.fsrs_card = state
    card.due = due_of(state)


@dataclass(frozen=True)
class Step:
    """What one try did to its card."""

    correct: bool
    rating: fsrs.Rating | None  # None: the round is still open, the learner may try again
    revealed: bool  # the answer is shown now (second wrong try, or "Show me")

    @property
    def may_retry(self) -> bool:
        return self.rating is None


def close_round(card: ReviewCard, rating: fsrs.Rating, now: datetime) -> None:
    base = (card.round_base if card.tries else None) or card.fsrs_card
    _set_state(card, _review(base, rating, now))
    card.tries, card.round_base = 0, None
    card.last_rating, card.last_reviewed_at = int(rating), now
    card.reviews += 1


def try_card(card: ReviewCard, *, correct: bool, now: datetime) -> Step:
    """Apply one try (right or wrong) to the card's round."""
    if correct:
        rating = Rating.Good if card.tries == 0 else Rating.Hard
        close_round(card, rating, now)
        return Step(True, rating, revealed=False)
    if card.tries == 0:  # first wrong try: open the round, with a provisional Again
        card.round_base = card.fsrs_card
        _set_state(card, _review(card.fsrs_card, Rating.Again, now))
        card.tries = 1
        return Step(False, None, revealed=False)
    close_round(card, Rating.Again, now)
    return Step(False, Rating.Again, revealed=True)


def show_answer(card: ReviewCard, *, now: datetime) -> Step:
    """ "Show me": the round ends with Again and the answer is shown."""
    close_round(card, Rating.Again, now)
    return Step(False, Rating.Again, revealed=True)


def shuffled(items: Sequence[T], *, seed: str, key: int) -> list[T]:
    """``items`` in an order fixed by ``seed`` (the learner) and ``key`` (the question)."""
    out = list(items)
    random.Random(f"{seed}:{key}").shuffle(out)  # noqa: S311 - an order, not a secret
    return out

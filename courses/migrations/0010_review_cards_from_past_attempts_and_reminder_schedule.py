"""Replace the fixed 1/3/7-day review ladder with FSRS cards, keeping what learners did.

The ladder stored nothing of its own: it was recomputed from QuizAttempt rows on every
dashboard view. So nothing is dropped; instead every past answer is replayed through FSRS
(the same scheduler settings as courses.review, fuzzing off), one round per answer since the
old flow had no retries: a right answer rates Good, a wrong one Again. Label attempts submitted
together (same owner, equation and time) are one round of that equation's label set: all parts
right rates Good, otherwise Again. Old attempts get the rating they were replayed with.

Also adds the daily reminder task to django-celery-beat (courses/schedule.py, shared with the
demo loader).
"""

from collections import defaultdict

import fsrs
from django.db import migrations

from courses.schedule import create_schedule


def _replay(rounds):
    """(time, rating) in order → the FSRS card after them."""
    scheduler = fsrs.Scheduler(enable_fuzzing=False)
    card = fsrs.Card(card_id=0, due=rounds[0][0])
    for when, rating in rounds:
        card, _ = scheduler.review_card(card, rating, when)
    return card


def _card_row(ReviewCard, owner, rounds, **subject):
    card = _replay(rounds)
    return ReviewCard(
        user_id=owner[0],
        anon_key=owner[1],
        fsrs_card=card.to_dict(),
        due=card.due,
        last_rating=int(rounds[-1][1]),
        last_reviewed_at=rounds[-1][0],
        reviews=len(rounds),
        **subject,
    )


def forwards(apps, schema_editor):
    QuizAttempt = apps.get_model("courses", "QuizAttempt")
    LabelAttempt = apps.get_model("courses", "LabelAttempt")
    ReviewCard = apps.get_model("courses", "ReviewCard")

    quiz = defaultdict(list)
    for attempt in QuizAttempt.objects.order_by("created_at", "id").iterator():
        rating = fsrs.Rating.Good if attempt.correct else fsrs.Rating.Again
        quiz[(attempt.user_id, attempt.anon_key, attempt.question_id)].append(
            (attempt.created_at, rating)
        )
        if attempt.rating is None:
            QuizAttempt.objects.filter(pk=attempt.pk).update(rating=int(rating))
    cards = [
        _card_row(ReviewCard, key[:2], rounds, question_id=key[2]) for key, rounds in quiz.items()
    ]

    submissions = defaultdict(lambda: True)
    for attempt in LabelAttempt.objects.select_related("part").order_by("created_at", "id"):
        key = (attempt.user_id, attempt.anon_key, attempt.part.equation_id, attempt.created_at)
        submissions[key] = submissions[key] and attempt.correct
    labels = defaultdict(list)
    for (user_id, anon_key, equation_id, when), correct in submissions.items():
        rating = fsrs.Rating.Good if correct else fsrs.Rating.Again
        labels[(user_id, anon_key, equation_id)].append((when, rating))
    cards += [
        _card_row(ReviewCard, key[:2], sorted(rounds), equation_id=key[2])
        for key, rounds in labels.items()
    ]
    ReviewCard.objects.bulk_create(cards, batch_size=500)
    create_schedule(apps)


def backwards(apps, schema_editor):
    apps.get_model("courses", "ReviewCard").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("courses", "0009_fsrs_review_cards_and_reminders"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]

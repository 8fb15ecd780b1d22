"""The site's user, and the contracts the apps share.

``Publishable`` is what a chapter and a note have in common: a published flag, the moment of
first publication, and the QuerySet filters the newsletter and the feeds rely on.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone


class User(AbstractUser):
    """A learner or an editor. allauth logs people in by email; the username is generated."""

    # Moves whenever anything the learner did changes (an answer, a label, a finish, a review):
    # the key of their cached chapter pages, read with the user at no extra query.
    learning_rev = models.PositiveIntegerField(default=0, editable=False)

    class Meta(AbstractUser.Meta):
        swappable = "AUTH_USER_MODEL"
        db_table = "platform_user"

    def __str__(self) -> str:
        return self.email or self.username


class PublishableQuerySet(models.QuerySet):
    def published(self):
        """Rows readers may see. A model whose visibility depends on more (a chapter on its
        course) overrides this; ``published_since`` follows."""
        return self.filter(published=True)

    def published_since(self, when: datetime):
        """Published rows first published after ``when``, oldest first."""
        return self.published().filter(published_at__gt=when).order_by("published_at")


class Publishable(models.Model):
    """Hidden until an editor publishes it; ``published_at`` keeps the first publication, so
    unpublishing to fix a typo and publishing again does not make it new again."""

    published = models.BooleanField(default=False)
    published_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="Set the first time it is published."
    )

    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        if self.published and self.published_at is None:
            self.published_at = timezone.now()
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "published_at"}
        super().save(*args, **kwargs)

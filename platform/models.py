from django.contrib.auth.models import AbstractUser


class User(AbstractUser):
    """A learner or an editor. allauth logs people in by email; the username is generated."""

    class Meta(AbstractUser.Meta):
        swappable = "AUTH_USER_MODEL"
        db_table = "platform_user"

    def __str__(self) -> str:
        return self.email or self.username

"""Create the local editor account once and print how to log in."""

import secrets
from pathlib import Path

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from platform.editors import EDITORS_GROUP


class Command(BaseCommand):
    help = "Create a staff editor in the Editors group (once) and print its credentials."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--email", default="editor@fromscratch.test")

    def handle(self, *args, email: str, **options) -> None:
        User = get_user_model()
        credentials: Path = settings.VAR_DIR / "editor-credentials.txt"
        user = User.objects.filter(email__iexact=email).first()
        if user is None or not credentials.exists():
            password = secrets.token_urlsafe(12)
            if user is None:
                user = User(email=email, username=email.split("@")[0], is_staff=True)
            user.is_staff = True
            user.set_password(password)
            user.save()
            credentials.write_text(f"{email}\n{password}\n")
            credentials.chmod(0o600)
            state = "created"
        else:
            email, password = credentials.read_text().split()[:2]
            state = "exists"
        user.groups.add(Group.objects.get(name=EDITORS_GROUP))
        EmailAddress.objects.update_or_create(
            user=user, email=email, defaults={"verified": True, "primary": True}
        )
        self.stdout.write(
            f"Editor account ({state}): {email} / {password}   (kept in {credentials})"
        )

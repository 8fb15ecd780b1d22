"""Derived data only: a check whose code changed is queued for a fresh run."""

from django.db.models.signals import post_save
from django.dispatch import receiver

from . import services
from .models import SnippetCheck


@receiver(post_save, sender=SnippetCheck, dispatch_uid="notebook_check_code_saved")
def check_saved(sender, instance: SnippetCheck, raw: bool = False, **kwargs) -> None:
    if raw:  # loaddata: fixtures carry their own hashes
        return
    services.check_code_saved(check=instance)

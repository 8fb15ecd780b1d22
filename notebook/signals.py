"""Derived data only: a check whose code changed gets its new hash and a fresh run queued."""

from django.db.models.signals import post_save
from django.dispatch import receiver

from . import services, tasks
from .models import SnippetCheck


@receiver(post_save, sender=SnippetCheck, dispatch_uid="notebook_check_code_saved")
def check_saved(sender, instance: SnippetCheck, raw: bool = False, **kwargs) -> None:
    if raw:  # loaddata: fixtures carry their own hashes
        return
    if services.store_code_hash(check=instance):
        tasks.run_check.delay_on_commit(instance.pk)  # type: ignore[attr-defined]  # a DjangoTask

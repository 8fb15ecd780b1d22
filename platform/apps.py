from django.apps import AppConfig


class PlatformConfig(AppConfig):
    name = "platform"
    label = "platform"
    verbose_name = "Site and accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        # Bind @shared_task to the project's Celery app in every Django process.
        from . import celery  # noqa: F401
        from .editors import sync_editor_permissions

        post_migrate.connect(sync_editor_permissions, dispatch_uid="platform-editors")
        post_migrate.connect(sync_site_domain, dispatch_uid="platform-site")


def sync_site_domain(sender, using="default", **kwargs) -> None:
    """Point the Site row (used by allauth's emails) at SITE_URL."""
    from urllib.parse import urlsplit

    from django.conf import settings
    from django.contrib.sites.models import Site

    if sender.label != "platform":
        return
    domain = urlsplit(settings.SITE_URL).netloc
    Site.objects.using(using).update_or_create(
        id=settings.SITE_ID, defaults={"domain": domain, "name": settings.SITE_NAME}
    )

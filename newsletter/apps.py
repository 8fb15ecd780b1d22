from django.apps import AppConfig


class NewsletterConfig(AppConfig):
    name = "newsletter"
    verbose_name = "Newsletter"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from allauth.account.signals import email_confirmed
        from anymail.signals import tracking
        from celery.signals import worker_init

        email_confirmed.connect(_link_subscription, dispatch_uid="newsletter-link-subscription")
        tracking.connect(_tracking_event, dispatch_uid="newsletter-tracking-event")
        worker_init.connect(_warm_up_mail, dispatch_uid="newsletter-warm-up-mail", weak=False)


def _warm_up_mail(**kwargs) -> None:
    """In a Celery worker's parent process, before the pool forks: load what every send needs
    once (URL resolver, math font, typesetter), so no child pays ~1 s for it on its first chunk."""
    from .emails import warm_up

    warm_up()


def _link_subscription(request, email_address, **kwargs) -> None:
    """An address verified by allauth: tie its subscription to the account (derived data), so
    that deleting the account deletes the subscription as the account page promises."""
    from .services import subscriptions

    subscriptions.link_confirmed_address(user=email_address.user, email=email_address.email)


def _tracking_event(sender, event, esp_name, **kwargs) -> None:
    """An ESP's webhook reported on a message (anymail's normalised event): bounces,
    complaints and unsubscribes go to the bounce rules."""
    from .services import bounces

    bounces.record_anymail_event(event=event, esp_name=esp_name)

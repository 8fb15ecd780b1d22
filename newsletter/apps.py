from django.apps import AppConfig


class NewsletterConfig(AppConfig):
    name = "newsletter"
    verbose_name = "Newsletter"
    default_auto_field = "django.db.models.BigAutoField"

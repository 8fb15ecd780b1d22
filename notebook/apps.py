from django.apps import AppConfig


class NotebookConfig(AppConfig):
    name = "notebook"
    verbose_name = "Notebook"
    default_auto_field = "django.db.models.BigAutoField"

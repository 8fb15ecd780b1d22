from django.apps import AppConfig


class CoursesConfig(AppConfig):
    name = "courses"
    verbose_name = "Courses"
    default_auto_field = "django.db.models.BigAutoField"

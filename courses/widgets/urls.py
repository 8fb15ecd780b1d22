from django.urls import path

from courses.widgets import views, walkthrough
from courses.widgets.registry import WIDGETS

app_name = "widgets"

urlpatterns = [
    path("", views.index, name="index"),
    path("explorer/", views.explorer, name="explorer"),
    path("walkthrough/", walkthrough.walkthrough, name="walkthrough"),
    # One view for every registered widget; each keeps its own URL name (widgets:attention …).
    *(path(f"{key}/", views.widget, {"key": key}, name=key) for key in WIDGETS),
]

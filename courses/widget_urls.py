from django.urls import path

from . import widgets

app_name = "widgets"

urlpatterns = [
    path("", widgets.index, name="index"),
]

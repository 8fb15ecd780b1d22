from django.urls import path

from . import views

app_name = "notebook"

urlpatterns = [
    path("", views.index, name="index"),
    path("feed/rss/", views.index, name="feed_rss"),
]

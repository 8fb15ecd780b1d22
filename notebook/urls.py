from django.urls import path

from . import feeds, views

app_name = "notebook"

urlpatterns = [
    path("", views.index, name="index"),
    path("search/", views.search, name="search"),
    path("feed/rss/", feeds.NotesRssFeed(), name="feed_rss"),
    path("feed/atom/", feeds.NotesAtomFeed(), name="feed_atom"),
    path("topics/<slug:slug>/", views.topic, name="topic"),
    path("topics/<slug:slug>/feed/rss/", feeds.TopicRssFeed(), name="topic_feed_rss"),
    path("topics/<slug:slug>/feed/atom/", feeds.TopicAtomFeed(), name="topic_feed_atom"),
    path("<slug:slug>/", views.note, name="note"),
    path("<slug:slug>/checks/", views.note_checks, name="note_checks"),
]

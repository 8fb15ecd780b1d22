from django.urls import path

from . import feeds, views

app_name = "newsletter"

urlpatterns = [
    path("", views.subscribe, name="subscribe"),
    path("confirm/<str:token>/", views.confirm, name="confirm"),
    path("unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    path("unsubscribe/<str:token>/resubscribe/", views.resubscribe, name="resubscribe"),
    path("account/subscribe/", views.account_subscribe, name="account_subscribe"),
    path("account/unsubscribe/", views.account_unsubscribe, name="account_unsubscribe"),
    path("archive/", views.archive, name="archive"),
    path("archive/feed/", feeds.IssueFeed(), name="feed"),
    path("archive/<int:pk>/", views.issue, name="issue"),
]

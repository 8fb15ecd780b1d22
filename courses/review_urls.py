from django.urls import path

from . import review_views

app_name = "review"

urlpatterns = [
    path("", review_views.session, name="session"),
    path("<int:card_id>/", review_views.answer, name="answer"),
    path("reminders/", review_views.reminders, name="reminders"),
    path("reminders/off/<str:token>/", review_views.reminders_off, name="reminders_off"),
]

from django.urls import path

from . import views

app_name = "courses"

urlpatterns = [
    path("", views.course_list, name="index"),
    path("dashboard/", views.dashboard, name="dashboard"),
]

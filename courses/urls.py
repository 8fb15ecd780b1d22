from django.urls import path

from . import views

app_name = "courses"

urlpatterns = [
    path("", views.course_list, name="index"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("gallery/", views.typesetting_gallery, name="gallery"),
    path("<slug:course_slug>/", views.course_detail, name="course"),
    path("<slug:course_slug>/<slug:chapter_slug>/", views.chapter_detail, name="chapter"),
    path("<slug:course_slug>/<slug:chapter_slug>/check/", views.check_answers, name="check"),
    path(
        "<slug:course_slug>/<slug:chapter_slug>/label/<int:equation_id>/",
        views.label_parts,
        name="label",
    ),
    path("<slug:course_slug>/<slug:chapter_slug>/finish/", views.finish_chapter, name="finish"),
    path(
        "<slug:course_slug>/<slug:chapter_slug>/code/<int:listing_id>/",
        views.download_listing,
        name="listing",
    ),
]

from django.urls import path

from . import registry as widgets
from . import walkthrough

app_name = "widgets"

urlpatterns = [
    path("", widgets.index, name="index"),
    path("attention/", widgets.attention, name="attention"),
    path("softmax/", widgets.softmax, name="softmax"),
    path("norms/", widgets.norms, name="norms"),
    path("adam/", widgets.adam, name="adam"),
    path("rope/", widgets.rope, name="rope"),
    path("explorer/", walkthrough.explorer, name="explorer"),
    path("walkthrough/", walkthrough.walkthrough, name="walkthrough"),
]

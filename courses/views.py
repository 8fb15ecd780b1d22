from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def course_list(request: HttpRequest) -> HttpResponse:
    return render(request, "courses/course_list.html")


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return render(request, "courses/dashboard.html")

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def subscribe(request: HttpRequest) -> HttpResponse:
    return render(request, "newsletter/subscribe.html")

from anymail import urls as anymail_urls
from anymail.exceptions import AnymailError
from django.conf import settings
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseForbidden,
)
from django.urls import URLPattern, path
from django.views.decorators.csrf import csrf_exempt

from . import feeds, views

_ANYMAIL_TRACKING = {
    str(pattern.name).removesuffix("_tracking_webhook"): pattern.callback
    for pattern in anymail_urls.urlpatterns
    if isinstance(pattern, URLPattern) and (pattern.name or "").endswith("_tracking_webhook")
}


@csrf_exempt
def anymail_tracking(request: HttpRequest, esp: str) -> HttpResponse:
    """anymail's tracking webhook of the configured ESP (ANYMAIL_ESP), at
    /newsletter/anymail/<esp>/tracking/. anymail checks the basic auth and sends the
    ``tracking`` signal (newsletter/apps.py); it would accept unauthenticated posts when no
    WEBHOOK_SECRET is set, so those are refused here first."""
    view = _ANYMAIL_TRACKING.get(esp)
    if view is None or esp != settings.ANYMAIL_ESP:
        raise Http404("No webhook for this provider.")
    if not settings.ANYMAIL.get("WEBHOOK_SECRET"):
        return HttpResponseForbidden(
            "Webhooks are off: set ANYMAIL_WEBHOOK_SECRET.", content_type="text/plain"
        )
    try:
        return view(request)
    except (ValueError, KeyError, TypeError, AttributeError, AnymailError) as exc:
        # An authenticated post anymail cannot read (not JSON, not this provider's shape).
        return HttpResponseBadRequest(
            f"Unreadable {esp} webhook payload ({type(exc).__name__}).", content_type="text/plain"
        )


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
    path("anymail/<slug:esp>/tracking/", anymail_tracking, name="anymail_tracking"),
]

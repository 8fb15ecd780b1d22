from functools import wraps

from anymail import urls as anymail_urls
from django.conf import settings
from django.http import HttpResponseForbidden
from django.urls import URLPattern, include, path
from django.views.decorators.csrf import csrf_exempt

from . import feeds, views


def _secret_required(view):
    """anymail accepts unauthenticated posts when no WEBHOOK_SECRET is set (with a warning);
    here they are refused until ANYMAIL_WEBHOOK_SECRET is configured."""

    @csrf_exempt
    @wraps(view)
    def guarded(request, *args, **kwargs):
        if not settings.ANYMAIL.get("WEBHOOK_SECRET"):
            return HttpResponseForbidden(
                "Webhooks are off: set ANYMAIL_WEBHOOK_SECRET.", content_type="text/plain"
            )
        return view(request, *args, **kwargs)

    return guarded


# anymail's tracking webhooks (/newsletter/anymail/<esp>/tracking/), behind the secret check.
anymail_tracking = [
    URLPattern(pattern.pattern, _secret_required(pattern.callback), name=pattern.name)
    for pattern in anymail_urls.urlpatterns
    if isinstance(pattern, URLPattern) and (pattern.name or "").endswith("_tracking_webhook")
]

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
    path("anymail/", include((anymail_tracking, "anymail"))),
]

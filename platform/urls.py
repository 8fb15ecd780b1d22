from django.contrib import admin
from django.urls import include, path

from . import accounts, views

admin.site.site_header = "From Scratch — editors"
admin.site.site_title = "From Scratch admin"
admin.site.index_title = "Write courses, notes and newsletter issues"
admin.site.login_form = accounts.AdminLoginForm
admin.site.login = accounts.too_many_attempts_is_429(admin.site.login)  # type: ignore[method-assign]

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("search/", views.search, name="search"),
    path("account/", views.account, name="account"),
    path("account/delete/", views.delete_account, name="account_delete"),
    # Before allauth's patterns: the POST fuzz visits pages in this order as a learner, and
    # allauth's email-confirmation page logs out a user who is not the key's owner.
    path("review/", include("courses.review_urls")),
    path("accounts/login/", accounts.login, name="account_login"),
    path("accounts/", include("allauth.urls")),
    path("admin/preview/", views.preview, name="preview"),
    path("admin/", admin.site.urls),
    path("courses/", include("courses.urls")),
    path("widgets/", include("courses.widgets.urls")),
    path("notebook/", include("notebook.urls")),
    path("newsletter/", include("newsletter.urls")),
]

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.urls import reverse

from platform.rendering import render_markdown

from .models import Issue


class IssueFeed(Feed):
    """RSS 2.0 feed of the public archive: the last 20 sent issues."""

    title = f"{settings.SITE_NAME} — the weekly letter"
    description = "Every issue of the From Scratch newsletter, as sent."

    def link(self) -> str:
        return reverse("newsletter:archive")

    def items(self):
        return Issue.objects.sent().order_by("-finished_at", "-id")[:20]

    def item_title(self, item: Issue) -> str:
        return item.subject

    def item_description(self, item: Issue) -> str:
        return render_markdown(item.body)

    def item_pubdate(self, item: Issue):
        return item.finished_at or item.send_at

    def item_updateddate(self, item: Issue):
        return item.updated_at

"""A code listing is run in the sandbox; the chapter page says whether it printed its output."""

import pytest
from django.urls import reverse

from courses import services
from courses.models import CodeListing
from tests.courses.factories import ChapterFactory, CodeListingFactory
from tests.support.waiting import wait_until

PASSING = "import numpy as np\nprint(np.arange(3).sum())\n"


@pytest.mark.django_db
def test_listing_check_passes_and_page_says_checked(client):
    listing = CodeListingFactory(source=PASSING, expected_output="3\n")
    services.check_listing(listing=listing)
    listing.refresh_from_db()
    assert listing.check_status == CodeListing.CheckStatus.PASSED
    assert listing.checked_at is not None
    body = client.get(listing.chapter.get_absolute_url()).content.decode()
    assert '<span class="badge badge-ok">Checked</span>' in body


@pytest.mark.django_db
def test_listing_check_failure_keeps_diff_and_page_says_failed(client):
    listing = CodeListingFactory(source="print(2 + 2)\n", expected_output="5\n")
    services.check_listing(listing=listing)
    listing.refresh_from_db()
    assert listing.check_status == CodeListing.CheckStatus.FAILED
    assert "-5" in listing.check_detail and "+4" in listing.check_detail
    body = client.get(listing.chapter.get_absolute_url()).content.decode()
    assert '<span class="badge badge-bad">Check failed</span>' in body
    assert "(failed): the output below is what it should print." in body


@pytest.mark.django_db
def test_listing_edit_forgets_the_last_check(client):
    listing = CodeListingFactory(source=PASSING, expected_output="3\n")
    services.check_listing(listing=listing)
    listing.source = PASSING.replace("3", "4")
    listing.save()
    listing.refresh_from_db()
    assert (listing.check_status, listing.checked_at) == (CodeListing.CheckStatus.NOT_CHECKED, None)
    assert "badge-ok" not in client.get(listing.chapter.get_absolute_url()).content.decode()


@pytest.mark.django_db
def test_listing_in_another_language_is_not_run():
    listing = CodeListingFactory(language="bash", source="echo hi\n", expected_output="hi\n")
    services.check_listing(listing=listing)
    assert listing.check_status == CodeListing.CheckStatus.NOT_RUN
    assert listing.get_check_status_display() == "not run"


@pytest.mark.worker
def test_admin_action_checks_listings_with_a_real_worker(shared_worker, editor_client):
    chapter = ChapterFactory()
    listing = CodeListingFactory(chapter=chapter, source=PASSING, expected_output="3\n")
    response = editor_client.post(
        reverse("admin:courses_chapter_changelist"),
        {"action": "check_listings", "_selected_action": [str(chapter.pk)]},
    )
    assert response.status_code == 302

    def checked() -> bool:
        listing.refresh_from_db()
        return listing.checked_at is not None

    wait_until(checked, timeout=60, interval=0.3, message=shared_worker.log)
    assert listing.check_status == "passed"
    assert CodeListing.objects.get(pk=listing.pk).check_passed

"""People: a learner, an editor (staff in the Editors group) and an outsider, with clients."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from tests.factories import UserFactory


@pytest.fixture
def password() -> str:
    return "correct horse battery staple 42"


@pytest.fixture
def learner(db, password):
    return UserFactory(email="learner@example.com", password=password)


@pytest.fixture
def outsider(db, password):
    return UserFactory(email="outsider@example.com", password=password)


@pytest.fixture
def editor(db, password):
    from platform.editors import EDITORS_GROUP, sync_editor_permissions

    user = UserFactory(email="editor@example.com", password=password, is_staff=True)
    # The data migration creates the group; a transactional test's flush removes it again.
    group, created = Group.objects.get_or_create(name=EDITORS_GROUP)
    if created:
        sync_editor_permissions(sender=None)
    user.groups.add(group)
    return user


@pytest.fixture
def learner_client(client, learner):
    client.force_login(learner)
    return client


@pytest.fixture
def editor_client(client, editor):
    client.force_login(editor)
    return client

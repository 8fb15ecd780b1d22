"""The "Editors" group: staff who write content in admin.

A data migration creates the group; after every ``migrate`` this handler gives it every
permission of the models in ``settings.EDITOR_APPS``, so a model added by a later migration is
editable without another data migration.
"""

from django.conf import settings

EDITORS_GROUP = "Editors"


def sync_editor_permissions(sender, using="default", **kwargs) -> None:
    from django.contrib.auth.models import Group, Permission

    group = Group.objects.using(using).filter(name=EDITORS_GROUP).first()
    if group is None:
        return
    perms = Permission.objects.using(using).filter(content_type__app_label__in=settings.EDITOR_APPS)
    group.permissions.add(*perms)

from django.db import migrations


def create_editors(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.get_or_create(name="Editors")


def remove_editors(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="Editors").delete()


class Migration(migrations.Migration):
    dependencies = [("platform", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(create_editors, remove_editors)]

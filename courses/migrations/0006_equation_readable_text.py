from django.db import migrations, models


def fill_readable_text(apps, schema_editor):
    """Existing equations get the text that Equation.save() writes from now on."""
    from courses.models import readable_latex

    Equation = apps.get_model("courses", "Equation")
    for equation in Equation.objects.only("pk", "latex").iterator():
        Equation.objects.filter(pk=equation.pk).update(readable_text=readable_latex(equation.latex))


class Migration(migrations.Migration):
    dependencies = [
        ("courses", "0005_listing_check_status_choices"),
    ]

    operations = [
        migrations.AddField(
            model_name="equation",
            name="readable_text",
            field=models.TextField(
                blank=True, editable=False, help_text="The LaTeX as readable text, for site search."
            ),
        ),
        migrations.RunPython(fill_readable_text, migrations.RunPython.noop),
    ]

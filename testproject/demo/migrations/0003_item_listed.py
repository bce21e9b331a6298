from django.db import migrations, models
from django.db.models import Count


def fill_listed(apps, schema_editor):
    """Existing items: what was listed is what is left plus what was sold."""
    Item = apps.get_model("demo", "Item")
    for item in Item.objects.annotate(sold=Count("purchases")):
        item.listed = item.stock + item.sold
        item.save(update_fields=["listed"])


class Migration(migrations.Migration):
    dependencies = [
        ("demo", "0002_receipts"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="listed",
            field=models.IntegerField(
                default=0, help_text="units the seller listed: sold + stock, while nothing races"
            ),
        ),
        migrations.RunPython(fill_listed, migrations.RunPython.noop),
    ]

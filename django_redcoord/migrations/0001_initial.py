from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        migrations.CreateModel(
            name="Dashboard",
            fields=[
                (
                    "id",
                    models.AutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                )
            ],
            options={
                "verbose_name": "coordination dashboard",
                "verbose_name_plural": "coordination dashboard",
                "managed": False,
                "default_permissions": ("view", "change"),
            },
        ),
    ]

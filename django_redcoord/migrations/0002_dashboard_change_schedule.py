from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("django_redcoord", "0001_initial")]

    operations = [
        migrations.AlterModelOptions(
            name="dashboard",
            options={
                "verbose_name": "coordination dashboard",
                "verbose_name_plural": "coordination dashboard",
                "managed": False,
                "default_permissions": ("view", "change"),
                "permissions": [("change_schedule", "Can edit the schedules of periodic jobs")],
            },
        ),
    ]

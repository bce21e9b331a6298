from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        migrations.CreateModel(
            name="OutboxEntry",
            fields=[
                ("id", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("backend", models.CharField(max_length=100)),
                ("queue", models.CharField(max_length=200)),
                ("payload", models.TextField()),
                ("created_at", models.DateTimeField(db_index=True)),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("last_error", models.TextField(blank=True, default="")),
            ],
            options={"verbose_name": "outbox entry", "verbose_name_plural": "outbox entries"},
        ),
    ]

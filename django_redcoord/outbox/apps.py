from django.apps import AppConfig


class OutboxConfig(AppConfig):
    name = "django_redcoord.outbox"
    label = "redcoord_outbox"
    verbose_name = "Redis coordination: task outbox"
    default_auto_field = "django.db.models.AutoField"

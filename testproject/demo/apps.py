from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "testproject.demo"
    label = "demo"
    verbose_name = "Demo market"
    default_auto_field = "django.db.models.BigAutoField"

from django.apps import AppConfig


class RedcoordConfig(AppConfig):
    name = "django_redcoord"
    verbose_name = "Redis coordination"

    def ready(self) -> None:
        from django.core.signals import setting_changed

        from . import checks, conf

        checks.register()
        setting_changed.connect(conf.clear_cache, dispatch_uid="redcoord-clear-config")

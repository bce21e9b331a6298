from django.apps import AppConfig


class RedcoordConfig(AppConfig):
    name = "django_redcoord"
    verbose_name = "Redis coordination"
    # what its migration made (no models.W042 in a project without DEFAULT_AUTO_FIELD)
    default_auto_field = "django.db.models.AutoField"

    def ready(self) -> None:
        from django.core.signals import setting_changed

        from . import checks, conf
        from .contrib import otel

        checks.register()
        setting_changed.connect(conf.clear_cache, dispatch_uid="redcoord-clear-config")
        # REDCOORD["TRACING"]; imports opentelemetry only when it is on
        otel.install_from_settings()
        setting_changed.connect(otel.on_setting_changed, dispatch_uid="redcoord-tracing")
        # The core's runtime gets REDCOORD (with the client factory, TIME_ZONE
        # and the DB hooks) on first use, from the settings as they are then;
        # setting_changed makes the next use read them again (conf.install_if_django).

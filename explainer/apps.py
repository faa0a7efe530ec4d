from django.apps import AppConfig


class ExplainerConfig(AppConfig):
    name = "explainer"
    default_auto_field = "django.db.models.BigAutoField"

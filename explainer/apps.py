from django.apps import AppConfig


class ExplainerConfig(AppConfig):
    name = "explainer"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from explainer.selectors.library import library_check

        # An empty or corrupt library would refuse every question: refuse to start instead, naming the file.
        library_check()

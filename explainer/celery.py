"""Celery app for the Django side: enqueues gpu work by task name, runs the qa queue."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "explainer.settings.dev")

app = Celery("explainer")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_routes = {"model_worker.*": {"queue": "gpu"}, "explainer.*": {"queue": "qa"}}
# explainer.tasks (finish_generation) and explainer.render_check.tasks (render_check), when present.
app.autodiscover_tasks(["explainer", "explainer.render_check"])

"""Celery app for the Django side: enqueues gpu work by task name, runs the `finish` queue (with the
reaper on Celery beat) and the `qa` queue."""

import os

from celery import Celery

from model_worker.queues import TASK_ROUTES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "explainer.settings.dev")

app = Celery("explainer")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_routes = TASK_ROUTES
# explainer.tasks (finish_generation, reap_generations) and explainer.render_check.tasks (render_check).
app.autodiscover_tasks(["explainer", "explainer.render_check"])

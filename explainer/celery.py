"""Celery app for the Django side: enqueues gpu work by task name, runs the `finish` queue (with the
reaper on Celery beat) and the `qa` queue."""

import logging
import os

from celery import Celery
from celery.signals import after_setup_logger

from model_worker.contract import logs
from model_worker.contract.queues import TASK_ROUTES
from model_worker.contract.workers import Heartbeat

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "explainer.settings.dev")

app = Celery("explainer")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_routes = TASK_ROUTES
# explainer.tasks (finish_generation, reap_generations) and explainer.render_check.tasks (render_check).
app.autodiscover_tasks(["explainer", "explainer.render_check"])
# Readiness (/readyz) counts the workers of each queue by their heartbeat in Redis.
app.steps["consumer"].add(Heartbeat)
# LOG_FORMAT=json, and a finish's lines name its generation (a render check names it in its service).
logs.celery_logging(frozenset({"explainer.finish_generation"}))


class QuietReaper(logging.Filter):
    """Drops the INFO lines of the reaper's routine runs (beat sends it every REAPER_INTERVAL_S, 5 s by
    default: three lines each time would bury every other line of `make run`). A run that acts (it
    returns how many generations it resent or failed) and every warning or error still show."""

    TASK = "explainer.reap_generations"

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.INFO:
            return True
        message = record.getMessage()
        if self.TASK not in message:
            return True
        return " succeeded in " in message and not message.endswith(": 0")


@after_setup_logger.connect
def _quiet_reaper(logger, **_):
    for handler in logger.handlers:
        handler.addFilter(QuietReaper())

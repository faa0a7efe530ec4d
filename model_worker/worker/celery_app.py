"""Celery app of the GPU worker (`celery -A model_worker.worker.celery_app worker -Q gpu`); never imports Django."""

from __future__ import annotations

import os

from celery import Celery

from model_worker.contract import logs
from model_worker.contract.queues import TASK_ROUTES
from model_worker.contract.workers import Heartbeat

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

# No fix-ups: Celery's Django fix-up would set Django up whenever DJANGO_SETTINGS_MODULE is exported.
app = Celery("model_worker", broker=REDIS_URL, include=["model_worker.worker.tasks"], fixups=[])
app.conf.update(
    task_routes=TASK_ROUTES,
    task_default_queue="gpu",
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    # One page at a time per process: the model is the scarce thing, not the queue.
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)
# Readiness (/readyz) counts the workers of each queue by their heartbeat in Redis.
app.steps["consumer"].add(Heartbeat)
# LOG_FORMAT=json, and each page's lines name its generation.
logs.celery_logging(frozenset({"model_worker.generate_page"}))

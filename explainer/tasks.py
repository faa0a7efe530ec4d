"""Tasks of the web worker (queue `qa`): a few lines each, the work lives in services."""

from __future__ import annotations

import redis
from celery import shared_task
from django.db import OperationalError

from explainer.services.generation import generation_finish
from model_worker.backends.base import PageOutcome


@shared_task(
    name="explainer.finish_generation",
    acks_late=True,
    autoretry_for=(redis.ConnectionError, OperationalError),  # Redis away, database locked
    max_retries=3,
    retry_backoff=2,
    soft_time_limit=60,
    time_limit=90,
)
def finish_generation(generation_id: str, outcome: dict) -> str:
    return generation_finish(generation_id=generation_id, outcome=PageOutcome.from_dict(outcome)).status

"""Tasks of the web side: a few lines each, the work lives in services.

Both run on the `finish` queue (model_worker/contract/queues.py), whose worker does nothing slow, so a page's
`done` never waits behind a render check on `qa`."""

from __future__ import annotations

import redis
from celery import shared_task
from django.db import OperationalError

from explainer.services.finishing import generation_finish
from explainer.services.lifecycle import generations_reap
from model_worker.contract.pages import PageOutcome


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


@shared_task(name="explainer.reap_generations", ignore_result=True, soft_time_limit=60, time_limit=90)
def reap_generations() -> int:
    """Sent by Celery beat every REAPER_INTERVAL_S (settings.CELERY_BEAT_SCHEDULE)."""
    return len(generations_reap())

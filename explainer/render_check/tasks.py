"""The `explainer.render_check` task (queue `qa`): a few lines; the work lives in the service."""

from __future__ import annotations

import redis
from celery import shared_task
from django.db import OperationalError

from explainer.models import PageVersion, RenderCheck
from explainer.services.render_checks import render_check_run


@shared_task(
    bind=True,
    name="explainer.render_check",
    # queue qa: routed by task_routes in explainer/celery.py
    acks_late=True,  # safe: the service spots a redelivered duplicate and returns the check it made
    autoretry_for=(redis.ConnectionError, OperationalError),
    max_retries=2,
    retry_backoff=5,
    soft_time_limit=100,  # the check's own limit is 75 s
    time_limit=130,
)
def render_check(self, page_id: int) -> str:
    try:
        check = render_check_run(page_id=page_id)
    except PageVersion.DoesNotExist:
        return "missing"  # deleted since it was queued: nothing to check
    if check.status == RenderCheck.Status.ERROR and self.request.retries < self.max_retries:
        raise self.retry(countdown=10)  # the browser could not start: try again, a bounded number of times
    return check.status

"""A learner stops a generation."""

from __future__ import annotations

from django.conf import settings

from explainer.models import Generation
from explainer.services.finishing import generation_finish
from explainer.services.streams import redis_client
from model_worker.contract import handle


def generation_cancel(*, generation: Generation) -> None:
    """Stop this generation: a worker writing it stops at its next block boundary; one still waiting in
    the queue is cancelled now (the learner does not wait for a worker to take it just to stop it)."""
    outcome = handle.cancel(redis_client(), str(generation.pk), queued=generation.status == Generation.Status.QUEUED,
                            ttl_s=settings.GENERATION_STREAM_TTL_S)
    if outcome is not None:
        generation_finish(generation_id=generation.pk, outcome=outcome)

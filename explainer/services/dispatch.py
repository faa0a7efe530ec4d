"""A generation and the GPU queue: send its request, and tell it its place in the queue."""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from explainer import metrics
from explainer.models import Generation
from explainer.selectors.generation import generation_queue_position, generations_waiting_after
from explainer.services.learner_messages import UNAVAILABLE
from explainer.services.rejection import GenerationRejected
from explainer.services.streams import event_append, redis_client
from model_worker.contract import handle, logs
from model_worker.contract.events import Queued, Topic
from model_worker.contract.pages import PageRequest
from model_worker.contract.queues import GPU_QUEUE, PAGE_PRIORITY

log = logging.getLogger(__name__)


def queued_event(generation: Generation, position: int) -> Queued:
    return Queued(thread=str(generation.thread_id), position=position)


def generation_enqueue(generation: Generation, request: PageRequest, *, topic: Topic | None = None) -> None:
    """Send a generation's request to the GPU queue, announcing it as `queued` (then its `topic`)."""
    with logs.generation(generation.pk):
        _enqueue(generation, request, topic)


def _enqueue(generation: Generation, request: PageRequest, topic: Topic | None) -> None:
    try:
        position = generation_queue_position(generation=generation)
        event_append(generation_id=generation.pk, event=queued_event(generation, position))
        if topic is not None:
            event_append(generation_id=generation.pk, event=topic)
        generation_send(str(generation.pk), request)
        log.info("generation %s queued at position %d", generation.pk, position)
    except Exception as exc:  # Redis or the broker is away: nothing will run it, so say so now
        log.exception("could not queue generation %s", generation.pk)
        if Generation.objects.filter(pk=generation.pk, status=Generation.Status.QUEUED).update(
            status=Generation.Status.FAILED, error_code="unavailable", error_message=UNAVAILABLE,
            finished_at=timezone.now(),
        ):
            metrics.generation_ended(outcome="failed", error_code="unavailable")
        raise GenerationRejected("unavailable", UNAVAILABLE) from exc


def generation_send(generation_id: str, request: PageRequest, *, priority: int = PAGE_PRIORITY) -> None:
    """Put the generation's task on the `gpu` queue, noted (ticket and request) for the reaper; a page sent
    again (`REDELIVERY_PRIORITY`) goes ahead of those waiting."""
    from explainer.celery import app

    handle.sent(redis_client(), generation_id, request, settings.GENERATION_STREAM_TTL_S)
    app.send_task(
        "model_worker.generate_page",
        args=[generation_id, request.to_dict()],
        kwargs={"stream_maxlen": settings.GENERATION_STREAM_MAXLEN, "stream_ttl_s": settings.GENERATION_STREAM_TTL_S},
        queue=GPU_QUEUE,
        priority=priority,
    )


def queue_positions_announce(*, left: Generation) -> None:
    """`left` has left the queue: every generation still waiting behind it hears its new position."""
    try:
        waiting = generations_waiting_after(generation=left)
        if not waiting:
            return
        unclaimed = handle.unclaimed(redis_client(), [str(g.pk) for g, _ in waiting])
        for (generation, position), still_queued in zip(waiting, unclaimed, strict=True):
            if still_queued:  # not yet taken by a worker
                event_append(generation_id=generation.pk, event=queued_event(generation, position))
    except Exception:  # positions are a courtesy: a failure here must not undo the finish
        log.exception("could not announce queue positions after %s", left.pk)

"""The reaper: no generation is lost or stuck. Run every `REAPER_INTERVAL_S` by Celery beat (task
`explainer.reap_generations` on the `finish` worker), it looks at every generation the database still
calls active and, from what Redis says about it (`model_worker.contract.lifecycle`):

- its worker died: as soon as the claim has lapsed, tells the learner the page is queued again (Celery
  redelivers the task); if nobody takes it within `LOST_AFTER_S`, sends the task again once, else
  fails it with `worker_lost`;
- its task is gone (no ticket, never claimed: Redis lost the queue, say in an outage without
  persistence): sends it again once, else fails it with `unavailable`;
- it finished but the `finish` task never recorded it (`REAPER_FINISH_AFTER_S`): records the outcome
  the worker left in Redis.

Each of these tells the learner through the generation's events (`queued` again, or `error`).
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from explainer.models import Generation
from explainer.selectors.generation import ACTIVE, generation_queue_position
from explainer.services.dispatch import generation_send
from explainer.services.finishing import generation_finish
from explainer.services.learner_messages import QUEUE_LOST, REQUEUED, WORKER_LOST
from explainer.services.streams import event_append, redis_client
from model_worker.contract import handle, lifecycle, logs
from model_worker.contract.events import Queued
from model_worker.contract.pages import PageOutcome
from model_worker.contract.queues import REDELIVERY_PRIORITY

log = logging.getLogger(__name__)

MAX_REQUEUES = 1


def reap_verdict(state: lifecycle.State, now: float) -> str:
    """What to do with an active generation: `wait`, `tell`, `record`, `requeue`, `fail_lost` or `fail_gone`."""
    if state.finished:
        if state.outcome is not None and now - (state.finished_at or 0) > settings.REAPER_FINISH_AFTER_S:
            return "record"
        return "wait"
    if state.running or state.ticket is not None:
        return "wait"  # a worker holds it, or its task is on the queue
    if state.attempts == 0:  # never claimed, and no ticket: the task is gone
        return "requeue" if state.requeued < MAX_REQUEUES else "fail_gone"
    if state.beat is not None and now - state.beat <= lifecycle.LOST_AFTER_S:
        # Its claim just lapsed: a redelivery may take it any moment; meanwhile the learner hears why.
        return "tell" if state.told < state.attempts else "wait"
    if state.attempts < lifecycle.MAX_ATTEMPTS and state.requeued < MAX_REQUEUES:
        return "requeue"
    return "fail_lost"


def generations_reap(*, now: float | None = None, limit: int = 500) -> dict[str, str]:
    """One pass over the active generations older than `REAPER_GRACE_S`; returns {id: verdict} for
    those acted upon. Passes never overlap (a Redis lock)."""
    r = redis_client()
    if not handle.reaper_turn(r):
        return {}
    try:
        now = time.time() if now is None else now
        cutoff = timezone.now() - timedelta(seconds=settings.REAPER_GRACE_S)
        active = list(Generation.objects.filter(status__in=ACTIVE, created_at__lt=cutoff)
                      .order_by("created_at").values_list("pk", flat=True)[:limit])
        acted = {}
        for generation_id in map(str, active):
            state = handle.claim_state(r, generation_id)
            verdict = reap_verdict(state, now)
            if verdict != "wait":
                with logs.generation(generation_id):
                    acted[generation_id] = _act(r, generation_id, verdict, state)
        return acted
    finally:
        handle.reaper_turn_end(r)


def _act(r, generation_id: str, verdict: str, state: lifecycle.State) -> str:
    """Carry the verdict out; returns what was done (a resend without a kept request becomes a failure)."""
    request = handle.kept_request(r, generation_id) if verdict == "requeue" else None
    if verdict == "requeue" and request is None:
        verdict = "fail_lost" if state.attempts else "fail_gone"
    log.warning("reaper: generation %s: %s", generation_id, verdict)
    if verdict == "record":
        generation_finish(generation_id=generation_id, outcome=PageOutcome.from_dict(state.outcome))
    elif verdict in ("tell", "requeue"):
        if verdict == "requeue":
            lifecycle.count_requeue(r, generation_id, settings.GENERATION_STREAM_TTL_S)
        if state.attempts and state.told < state.attempts:
            lifecycle.note_told(r, generation_id, state.attempts, settings.GENERATION_STREAM_TTL_S)
            lost = {"code": "worker_lost", "message": REQUEUED}
        else:
            lost = {}
        generation = Generation.objects.get(pk=generation_id)
        event_append(generation_id=generation_id, event=Queued(
            thread=str(generation.thread_id), position=generation_queue_position(generation=generation),
            requeued=True, **lost,
        ))
        if verdict == "requeue":
            generation_send(generation_id, request, priority=REDELIVERY_PRIORITY)  # it has waited once already
    else:
        code, message = ("worker_lost", WORKER_LOST) if verdict == "fail_lost" else ("unavailable", QUEUE_LOST)
        generation_finish(generation_id=generation_id, outcome=PageOutcome.failed(code, message))
    return verdict

"""The GPU task: run the page backend for one generation, streaming its drafts into Redis.

The task claims the generation before running it and keeps the claim alive while it runs (from a
heartbeat thread, every third of the TTL), so a worker that dies lets go within `CLAIM_TTL_S`; Celery then delivers
the task again (`acks_late`, `reject_on_worker_lost`) and the new attempt takes the expired claim.
"""

from __future__ import annotations

import logging
from functools import cache

import redis
from celery.exceptions import SoftTimeLimitExceeded

from model_worker.config.environment import env_number
from model_worker.contract import lifecycle, stream
from model_worker.contract.connection import sync_options
from model_worker.contract.events import Retry
from model_worker.contract.pages import PageOutcome, PageRequest
from model_worker.contract.queues import FINISH_QUEUE
from model_worker.worker.celery_app import REDIS_URL, app
from model_worker.worker.claim import Claim, dead_holder, new_token
from model_worker.worker.run import run_page
from model_worker.worker.stream_sink import StreamSink
from model_worker.worker.warm import backend  # also connects the warm-up signal handlers

log = logging.getLogger(__name__)

SOFT_TIME_LIMIT_S = env_number("GENERATION_SOFT_LIMIT_S", 600, minimum=1)
HARD_TIME_LIMIT_S = SOFT_TIME_LIMIT_S + 30
# A delivery that finds the claim held (the previous worker's, until it lapses) tries again just after
# it lapses, this many times at most.
HELD_RETRIES = 4
WORKER_LOST = "The model worker stopped while writing this page."


@cache
def redis_client() -> redis.Redis:
    return redis.Redis.from_url(REDIS_URL, **sync_options())


# Routed to queue `gpu` by task_routes (queue= on the task is deprecated in Celery 5).
@app.task(
    name="model_worker.generate_page",
    bind=True,
    acks_late=True,
    # A child killed mid-page (out of memory, a crash) puts the message back for another attempt.
    reject_on_worker_lost=True,
    # ... at the front of the queue, ahead of the pages asked after it.
    Request="model_worker.worker.redelivery:FrontOfQueueRequest",
    # A lost broker connection is worth another try; a failing model is reported, not retried.
    autoretry_for=(redis.ConnectionError,),
    max_retries=3,
    retry_backoff=2,
    soft_time_limit=SOFT_TIME_LIMIT_S,
    time_limit=HARD_TIME_LIMIT_S,
)
def generate_page(self, generation_id: str, request: dict, stream_maxlen: int = stream.DEFAULT_MAXLEN,
                  stream_ttl_s: int = stream.DEFAULT_TTL_S) -> str:
    r = redis_client()
    token = new_token()
    attempt = lifecycle.claim(r, generation_id, token, keep_s=stream_ttl_s)
    if attempt == lifecycle.HELD and (dead := dead_holder(r, generation_id)):
        # The previous holder was a process on this host that is gone (a child killed mid-page):
        # no need to wait for its claim to lapse.
        attempt = lifecycle.take_over(r, generation_id, token, dead, keep_s=stream_ttl_s) or lifecycle.HELD
    if attempt == lifecycle.FINISHED:
        log.info("generation %s skipped: it already finished", generation_id)
        return "skipped"
    if attempt == lifecycle.HELD:
        # Most often the claim of a worker that died, not yet expired: try again once it has.
        if self.request.retries < HELD_RETRIES:
            countdown = min(lifecycle.claim_left_s(r, generation_id), lifecycle.CLAIM_TTL_S) + 0.5
            raise self.retry(countdown=countdown, max_retries=HELD_RETRIES)
        log.info("generation %s skipped: another worker holds it", generation_id)
        return "skipped"
    limits = {"maxlen": stream_maxlen, "ttl_s": stream_ttl_s}
    try:
        with Claim(r, generation_id, token, keep_s=stream_ttl_s) as held:
            if attempt > lifecycle.MAX_ATTEMPTS:
                outcome = PageOutcome.failed(
                    "worker_lost", f"{WORKER_LOST} It stopped {attempt - 1} times on this page, so it was not "
                    "tried again. Please try a different question.")
            else:
                if attempt > 1:  # the learner's live view starts over
                    stream.append(r, generation_id, Retry(attempt=attempt, code="worker_lost",
                                                          message=f"{WORKER_LOST} Writing it again."), **limits)
                sink = StreamSink(r, generation_id, claim=held, **limits)
                try:
                    if sink.should_stop():
                        outcome = PageOutcome(status="cancelled")
                    else:
                        outcome = _outcome_or_error(generation_id, request, sink)
                    sink.close()
                except BaseException:
                    sink.close(write=False)  # what the writer had not written is lost with the attempt
                    raise
    except BaseException:
        try:  # a retry, or a redelivery after a crash, may take it again at once
            lifecycle.release(r, generation_id, token)
        except redis.RedisError:  # Redis away: the claim lapses by itself within CLAIM_TTL_S
            log.warning("could not release the claim on %s", generation_id)
        raise
    if held.lost:
        log.warning("generation %s: claim lost mid-page; leaving it to the worker that holds it", generation_id)
        return "superseded"
    if not lifecycle.finish(r, generation_id, token, outcome.to_dict(), stream_ttl_s):
        return "superseded"
    app.send_task("explainer.finish_generation", args=[generation_id, outcome.to_dict()], queue=FINISH_QUEUE)
    return outcome.status


def _outcome_or_error(generation_id: str, request: dict, sink: StreamSink) -> PageOutcome:
    try:
        page_request = PageRequest.from_dict(request)
    except (TypeError, ValueError) as exc:
        return PageOutcome.failed("bad_request", f"The request could not be read: {exc}")
    try:
        page_backend = backend()
    except Exception as exc:  # a missing checkpoint or a bad MODEL_BACKEND: say so, keep the worker up
        log.exception("page backend failed to load")
        return PageOutcome.failed("model_unavailable", f"The model could not be loaded: {exc}")
    try:
        return run_page(page_backend, page_request, sink)
    except SoftTimeLimitExceeded:
        return PageOutcome.failed("timeout", f"The page took longer than {SOFT_TIME_LIMIT_S} s to write.")
    except redis.ConnectionError:
        raise
    except Exception as exc:
        log.exception("generation %s failed", generation_id)
        return PageOutcome.failed("generation_failed", f"The model stopped with an error: {exc}")

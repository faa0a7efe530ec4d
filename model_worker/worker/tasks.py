"""The GPU task: run the page backend for one generation, streaming its drafts into Redis.

The task claims the generation before running it and keeps the claim alive while it runs (every block
and from a heartbeat thread), so a worker that dies lets go within `CLAIM_TTL_S`; Celery then delivers
the task again (`acks_late`, `reject_on_worker_lost`) and the new attempt takes the expired claim.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from functools import cache

import redis
from celery.exceptions import SoftTimeLimitExceeded

from model_worker import events, lifecycle
from model_worker.backends.base import PageBackend, PageOutcome, PageRequest
from model_worker.config import engine_settings, load_backend
from model_worker.queues import FINISH_QUEUE
from model_worker.redis_options import sync_options
from model_worker.worker.celery_app import REDIS_URL, app
from model_worker.worker.run import run_page

log = logging.getLogger(__name__)

SOFT_TIME_LIMIT_S = int(os.environ.get("GENERATION_SOFT_LIMIT_S", "600"))
HARD_TIME_LIMIT_S = SOFT_TIME_LIMIT_S + 30
# A delivery that finds the claim held (the previous worker's, until it lapses) tries again just after
# it lapses, this many times at most.
HELD_RETRIES = 4
WORKER_LOST = "The model worker stopped while writing this page."


@cache
def redis_client() -> redis.Redis:
    return redis.Redis.from_url(REDIS_URL, **sync_options())


@cache
def backend() -> PageBackend:
    """The configured backend, loaded once per worker process on its first page."""
    settings = engine_settings()
    log.info("loading page backend %s from %s on %s", settings.backend, settings.model_path, settings.device)
    return load_backend(settings)


class StreamSink:
    """A `PageSink` that appends `draft`, `commit` and `stats` events to the generation's stream.

    Drafts are written as the backend sends them (it thins them to what a screen needs)."""

    def __init__(self, r, generation_id: str, *, maxlen: int = events.DEFAULT_MAXLEN,
                 ttl_s: int = events.DEFAULT_TTL_S, clock=time.monotonic, claim: Claim | None = None):
        self.r, self.generation_id, self.clock, self.claim = r, generation_id, clock, claim
        self.limits = {"maxlen": maxlen, "ttl_s": ttl_s}
        self.started = clock()
        self.tokens = 0

    def on_draft(self, block: int, pieces: list[str | None]) -> None:
        events.append(self.r, self.generation_id, "draft", block=block, pieces=pieces, **self.limits)

    def on_commit(self, block: int, text: str, tokens: int) -> None:
        self.tokens += tokens
        seconds = self.clock() - self.started
        events.append(self.r, self.generation_id, "commit", block=block, text=text, **self.limits)
        events.append(self.r, self.generation_id, "stats", blocks=block + 1, tokens=self.tokens,
                      seconds=round(seconds, 3), tokens_per_s=round(self.tokens / seconds, 1) if seconds else 0.0,
                      **self.limits)

    def should_stop(self) -> bool:
        if self.claim is not None and not self.claim.beat():
            return True  # another worker holds the generation now: this one must not write on
        return events.stop_due(events.flags(self.r, self.generation_id))


class Claim:
    """This worker's hold on a generation, kept alive by a heartbeat thread and at each block."""

    def __init__(self, r, generation_id: str, token: str, *, ttl_s: int = lifecycle.CLAIM_TTL_S,
                 every_s: float = lifecycle.HEARTBEAT_S, keep_s: int = events.DEFAULT_TTL_S):
        self.r, self.generation_id, self.token = r, generation_id, token
        self.ttl_s, self.every_s, self.keep_s = ttl_s, every_s, keep_s
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat {generation_id}", daemon=True)

    def beat(self) -> bool:
        """Refresh the claim; False (for good) once it is no longer this worker's."""
        if not self.lost:
            try:
                self.lost = not lifecycle.refresh(self.r, self.generation_id, self.token, self.ttl_s, self.keep_s)
            except redis.RedisError as exc:  # Redis away for a moment: the claim lasts ttl_s meanwhile
                log.warning("heartbeat of %s failed: %s", self.generation_id, exc)
        return not self.lost

    def _run(self) -> None:
        while not self._stop.wait(self.every_s) and self.beat():
            pass

    def __enter__(self) -> Claim:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def _token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _dead_holder(r, generation_id: str) -> str | None:
    """The holder's token when it names a process on this host that no longer exists, or an earlier
    attempt of this very process (one that ended without letting go, say while Redis was away: a
    worker process runs one task at a time, so it has ended)."""
    token = lifecycle.holder(r, generation_id)
    host, _, rest = (token or "").partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return None
    if int(pid) == os.getpid():
        return token
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return token
    except PermissionError:  # alive, someone else's
        return None
    return None


# Routed to queue `gpu` by task_routes (queue= on the task is deprecated in Celery 5).
@app.task(
    name="model_worker.generate_page",
    bind=True,
    acks_late=True,
    # A child killed mid-page (out of memory, a crash) puts the message back for another attempt.
    reject_on_worker_lost=True,
    # A lost broker connection is worth another try; a failing model is reported, not retried.
    autoretry_for=(redis.ConnectionError,),
    max_retries=3,
    retry_backoff=2,
    soft_time_limit=SOFT_TIME_LIMIT_S,
    time_limit=HARD_TIME_LIMIT_S,
)
def generate_page(self, generation_id: str, request: dict, stream_maxlen: int = events.DEFAULT_MAXLEN,
                  stream_ttl_s: int = events.DEFAULT_TTL_S) -> str:
    r = redis_client()
    token = _token()
    attempt = lifecycle.claim(r, generation_id, token, keep_s=stream_ttl_s)
    if attempt == lifecycle.HELD and (dead := _dead_holder(r, generation_id)):
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
                    events.append(r, generation_id, "retry", attempt=attempt, code="worker_lost",
                                  message=f"{WORKER_LOST} Writing it again.", **limits)
                sink = StreamSink(r, generation_id, claim=held, **limits)
                if sink.should_stop():
                    outcome = PageOutcome(status="cancelled")
                else:
                    outcome = _outcome_or_error(generation_id, request, sink)
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

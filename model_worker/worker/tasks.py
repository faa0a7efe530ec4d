"""The GPU task: run the page backend for one generation, streaming its drafts into Redis.

The task claims the generation before running it and keeps the claim alive while it runs (from a
heartbeat thread, every third of the TTL), so a worker that dies lets go within `CLAIM_TTL_S`; Celery then delivers
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
from celery.signals import worker_process_init, worker_ready

from model_worker.backends.base import PageBackend
from model_worker.config import engine_settings, load_backend
from model_worker.config.environment import env_number
from model_worker.contract import lifecycle, stream
from model_worker.contract.connection import sync_options
from model_worker.contract.pages import PageOutcome, PageRequest
from model_worker.contract.queues import FINISH_QUEUE
from model_worker.worker.celery_app import REDIS_URL, app
from model_worker.worker.run import run_page

log = logging.getLogger(__name__)

SOFT_TIME_LIMIT_S = env_number("GENERATION_SOFT_LIMIT_S", 600, minimum=1)
HARD_TIME_LIMIT_S = SOFT_TIME_LIMIT_S + 30
# While a page is written, a round trip to Redis at most this often (about as often as a screen redraws
# drafts; a stop request waits no longer than this plus one block), and at least every few seconds.
FLUSH_INTERVAL_S = 0.05
HEARTBEAT_EVERY_S = 5.0
# A delivery that finds the claim held (the previous worker's, until it lapses) tries again just after
# it lapses, this many times at most.
HELD_RETRIES = 4
WORKER_LOST = "The model worker stopped while writing this page."


@cache
def redis_client() -> redis.Redis:
    return redis.Redis.from_url(REDIS_URL, **sync_options())


_loading = threading.Lock()


def backend() -> PageBackend:
    """The configured backend, loaded once per worker process on its first page (once, too, when the
    pages of a thread pool ask at the same moment: MODEL_BATCH)."""
    with _loading:
        return _load_backend()


@cache
def _load_backend() -> PageBackend:
    settings = engine_settings()
    log.info("loading page backend %s from %s on %s (batch %d)", settings.backend, settings.model_path,
             settings.device, settings.batch)
    return load_backend(settings)


backend.cache_clear = _load_backend.cache_clear  # a test loads another backend


def warm_backend() -> None:
    """Load the backend now, so the first learner's page does not wait for it (about 11 s for the demo
    checkpoint on a 2-core machine, most of it importing torch and transformers). A page asked while it
    loads waits on the same load. A backend that fails to load is logged here and reported to each page
    that asks for it, as before."""
    try:
        backend()
    except Exception:  # noqa: BLE001  (each page reports the error to its learner)
        log.exception("the page backend could not be loaded; every page will report why")


def _warm_in_background() -> None:
    # A thread: a prefork child that takes more than a few seconds to start is killed by Celery.
    threading.Thread(target=warm_backend, name="warm-backend", daemon=True).start()


@worker_process_init.connect
def _warm_pool_process(**_) -> None:
    """Each prefork process (MODEL_BATCH 1: one process, one page at a time) loads its own backend."""
    _warm_in_background()


@worker_ready.connect
def _warm_thread_pool(**_) -> None:
    """A thread pool (MODEL_BATCH > 1) runs its pages in the main process: load the backend there. A
    prefork worker's main process runs no page, so it loads nothing."""
    try:
        threads = engine_settings().batch > 1
    except ValueError:  # a bad setting: the pages report it
        return
    if threads:
        _warm_in_background()


class StreamSink:
    """A `PageSink` that streams `draft`, `commit` and `stats` events into the generation's stream.

    A Redis round trip would stall the decoding loop for as long as it takes, so a writer thread does
    them: as soon as the loop queues something, but at most every FLUSH_INTERVAL_S, it appends what
    is queued and reads the stop flags, in one round trip (the claim beats on its own thread). `should_stop`
    answers from the latest flags (the first time it asks Redis itself, before the model runs); a
    failed write is raised to the loop at its next call. `close` stops the writer and writes what is
    left: the task calls it before handing the outcome on, so every commit precedes `done` in the stream.
    """

    def __init__(self, r, generation_id: str, *, maxlen: int = stream.DEFAULT_MAXLEN,
                 ttl_s: int = stream.DEFAULT_TTL_S, clock=time.monotonic, claim: Claim | None = None):
        self.r, self.generation_id, self.clock, self.claim = r, generation_id, clock, claim
        self.limits = {"maxlen": maxlen, "ttl_s": ttl_s}
        self.started = clock()
        self.tokens = 0
        self.stop = False
        self.exchanged = float("-inf")  # when the last round trip ended
        self.pending: list[dict] = []
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.closing = False
        self.error: BaseException | None = None
        self.writer: threading.Thread | None = None

    def on_draft(self, block: int, pieces: list[str | None]) -> None:
        self._queue({"type": "draft", "block": block, "pieces": pieces})

    def on_commit(self, block: int, text: str, tokens: int) -> None:
        self.tokens += tokens
        seconds = self.clock() - self.started
        self._queue({"type": "commit", "block": block, "text": text},
                    {"type": "stats", "blocks": block + 1, "tokens": self.tokens, "seconds": round(seconds, 3),
                     "tokens_per_s": round(self.tokens / seconds, 1) if seconds else 0.0})

    def should_stop(self) -> bool:
        self._raise()
        if self.claim is not None and self.claim.lost:
            return True  # another worker holds the generation now: this one must not write on
        if self.writer is None:
            self._exchange()
            self._start()
        if self.clock() - self.exchanged >= FLUSH_INTERVAL_S:
            self.wake.set()  # flags older than the interval: the writer reads them again now
        return self.stop

    def close(self, *, write: bool = True) -> None:
        """Stop the writer thread, then (with `write`) write what is left and read the flags once more."""
        if self.writer is not None:
            self.closing = True
            self.wake.set()
            self.writer.join()
            self.writer = None
        if write:
            self._raise()
            self._exchange()

    def _queue(self, *bodies: dict) -> None:
        self._raise()
        with self.lock:
            self.pending.extend(bodies)
        if self.writer is None:
            self._start()
        self.wake.set()

    def _start(self) -> None:
        self.writer = threading.Thread(target=self._write, name=f"stream-{self.generation_id}", daemon=True)
        self.writer.start()

    def _write(self) -> None:
        while True:
            self.wake.wait(HEARTBEAT_EVERY_S)  # something queued, flags asked for, closing, or a heartbeat due
            self.wake.clear()
            pause = self.exchanged + FLUSH_INTERVAL_S - self.clock()
            if pause > 0 and not self.closing:
                time.sleep(pause)  # what arrives meanwhile goes in the same round trip
            if self.closing:
                return
            try:
                self._exchange()
            except BaseException as exc:  # handed to the decoding loop, which raises it
                self.error = exc
                return

    def _exchange(self) -> None:
        with self.lock:
            bodies, self.pending = self.pending, []
        self.stop = stream.stop_due(stream.exchange(self.r, self.generation_id, bodies, **self.limits))
        self.exchanged = self.clock()

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error


class Claim:
    """This worker's hold on a generation, kept alive by a heartbeat thread."""

    def __init__(self, r, generation_id: str, token: str, *, ttl_s: int = lifecycle.CLAIM_TTL_S,
                 every_s: float = lifecycle.HEARTBEAT_S, keep_s: int = stream.DEFAULT_TTL_S):
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
        _held.add(self.token)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        _held.discard(self.token)
        self._stop.set()
        self._thread.join(timeout=5)


# Tokens of the claims this process's tasks hold now: a thread pool (MODEL_BATCH) runs several at once.
_held: set[str] = set()


def _token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _dead_holder(r, generation_id: str) -> str | None:
    """The holder's token when it names a process on this host that no longer exists, or an earlier
    attempt of this very process that ended without letting go (say while Redis was away): one no
    task of this process holds now."""
    token = lifecycle.holder(r, generation_id)
    host, _, rest = (token or "").partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return None
    if int(pid) == os.getpid():
        return None if token in _held else token
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
                    stream.append(r, generation_id, "retry", attempt=attempt, code="worker_lost",
                                  message=f"{WORKER_LOST} Writing it again.", **limits)
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

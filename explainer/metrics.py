"""What the app counts for Prometheus, one small call where each thing happens (docs/deploy.md, Metrics).

The families here are the deployment's (kept in Redis by `metrics_redis`, so a page asked on one machine
and recorded on another adds to the same numbers); `WEBSOCKETS_OPEN` is this process's own (a
`prometheus_client` gauge). Recording never fails the caller: a metric that cannot be written is logged.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from datetime import datetime

from django.conf import settings
from prometheus_client import Gauge

from explainer import metrics_redis
from explainer.metrics_redis import Family
from explainer.services.streams import redis_client

log = logging.getLogger(__name__)

# Seconds, from a fast page on a quiet GPU to a page that waited its turn behind many.
LATENCY_BUCKETS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)
RATE_BUCKETS = (1.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0)
CHECK_BUCKETS = (2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 75.0, 100.0)

GENERATIONS = Family("explainer_generations", "Generations by how they ended: done (a model's page), stored (a "
                     "stored page answered at once), failed or cancelled, with the error code.",
                     ("outcome", "error_code"))
PAGES = Family("explainer_pages", "Pages written by a model, by page backend.", ("backend",))
TIME_TO_FIRST_BLOCK = Family("explainer_time_to_first_block_seconds", "From the question to the page's first "
                             "finished block (model pages).", buckets=LATENCY_BUCKETS)
TIME_TO_DONE = Family("explainer_time_to_done_seconds", "From the question to `done` (model pages).",
                      buckets=LATENCY_BUCKETS)
TOKENS_PER_SECOND = Family("explainer_tokens_per_second", "Tokens per second of each model page, as its "
                           "backend measured it.", ("backend",), RATE_BUCKETS)
RENDER_CHECKS = Family("explainer_render_checks", "Render checks by verdict: passed, failed, or error (the "
                       "check could not run).", ("status",))
RENDER_CHECK_SECONDS = Family("explainer_render_check_seconds", "How long a render check took.",
                              buckets=CHECK_BUCKETS)
REPAIRS = Family("explainer_repairs", "Repairs queued for pages that failed their render check.")
ROUTER_DECISIONS = Family("explainer_router_decisions", "What the router made of a new question: routed (to a "
                          "library topic), unsure (near a topic, asked which), refused (near none), open (no "
                          "topic, written by an open-domain backend).", ("decision",))
SECOND_OPINIONS = Family("explainer_second_opinions", "The model's second opinion on a lesson the router was "
                         "unsure of: yes (it answers the question), no (written without it), unknown (no answer "
                         "in time, or none that says).", ("verdict",))
RATE_LIMIT_REFUSALS = Family("explainer_rate_limit_refusals", "Questions refused by a rate limit, by its code "
                             "(rate_limited: anonymous hourly; limit: a class's daily).", ("code",))

FAMILIES = [GENERATIONS, PAGES, TIME_TO_FIRST_BLOCK, TIME_TO_DONE, TOKENS_PER_SECOND, RENDER_CHECKS,
            RENDER_CHECK_SECONDS, REPAIRS, ROUTER_DECISIONS, SECOND_OPINIONS, RATE_LIMIT_REFUSALS]

# livesum: with several processes on one machine (prometheus_client's multiprocess mode), the live ones' sum.
WEBSOCKETS_OPEN = Gauge("explainer_websockets_open", "Learner sockets open on this process.",
                        multiprocess_mode="livesum")


@contextmanager
def _recording():
    """A Redis pipeline for what one event records, sent in one round trip; a failure is only logged."""
    try:
        pipe = redis_client().pipeline(transaction=False)
        yield pipe
        pipe.execute()
    except Exception as exc:  # noqa: BLE001 - a lost metric must never cost a learner a page
        log.warning("metric not recorded: %s", exc)


def backend_label() -> str:
    """The configured page backend, short (`clover`, `openai`, or the class of a `module:Class` path)."""
    return settings.MODEL_BACKEND.rpartition(":")[2] or settings.MODEL_BACKEND


def generation_ended(*, outcome: str, error_code: str = "") -> None:
    with _recording() as pipe:
        metrics_redis.add(pipe, GENERATIONS, {"outcome": outcome, "error_code": error_code})


def page_written(*, created_at: datetime, finished_at: datetime, stats: dict) -> None:
    """A model's page arrived: count it and time it. Its first block is placed by the backend's stats:
    `done` less the part of the page written after the first block (`seconds - first_block_s`)."""
    backend = backend_label()
    to_done = (finished_at - created_at).total_seconds()
    seconds, first_block, rate = stats.get("seconds"), stats.get("first_block_s"), stats.get("tokens_per_s")
    with _recording() as pipe:
        metrics_redis.add(pipe, GENERATIONS, {"outcome": "done", "error_code": ""})
        metrics_redis.add(pipe, PAGES, {"backend": backend})
        metrics_redis.observe(pipe, TIME_TO_DONE, to_done)
        if _number(seconds) and _number(first_block) and first_block > 0:
            metrics_redis.observe(pipe, TIME_TO_FIRST_BLOCK, max(to_done - (seconds - first_block), 0.0))
        if _number(rate) and rate > 0:
            metrics_redis.observe(pipe, TOKENS_PER_SECOND, float(rate), {"backend": backend})


def render_check_ended(*, status: str, seconds: float) -> None:
    with _recording() as pipe:
        metrics_redis.add(pipe, RENDER_CHECKS, {"status": status})
        metrics_redis.observe(pipe, RENDER_CHECK_SECONDS, seconds)


def repair_queued() -> None:
    with _recording() as pipe:
        metrics_redis.add(pipe, REPAIRS)


def router_decided(*, decision: str) -> None:
    with _recording() as pipe:
        metrics_redis.add(pipe, ROUTER_DECISIONS, {"decision": decision})


def second_opinion_given(*, verdict: str) -> None:
    with _recording() as pipe:
        metrics_redis.add(pipe, SECOND_OPINIONS, {"verdict": verdict})


def rate_limit_refused(*, code: str) -> None:
    with _recording() as pipe:
        metrics_redis.add(pipe, RATE_LIMIT_REFUSALS, {"code": code})


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def socket_opened() -> None:
    WEBSOCKETS_OPEN.inc()


def socket_closed() -> None:
    WEBSOCKETS_OPEN.dec()

"""Which Celery workers are alive, per queue: each worker beats into Redis, and readiness reads them back.

Every worker (GPU, finish, qa) adds `Heartbeat` to its consumer: every `BEAT_EVERY_S` it writes its name
into one sorted set per queue it consumes, `explainer:workers:<queue>`, scored with the moment its beat
lapses (Redis' own clock, so machines with skewed clocks agree), and removes itself when it shuts down.
A worker that dies stops beating and drops out after `HEARTBEAT_TTL_S`. `live` answers, for every
queue, the workers whose beat has not lapsed, in one round trip: cheap enough for a load balancer's
probe, with no broadcast to the workers.
"""

from __future__ import annotations

import logging
import os
import socket

from celery import bootsteps

from model_worker.config.environment import env_number
from model_worker.contract.connection import sync_options
from model_worker.contract.queues import FINISH_QUEUE, GPU_QUEUE, QA_QUEUE

log = logging.getLogger(__name__)

KEY_PREFIX = "explainer:workers:"
QUEUES = (GPU_QUEUE, FINISH_QUEUE, QA_QUEUE)
HEARTBEAT_TTL_S = env_number("WORKER_HEARTBEAT_TTL_S", 15, minimum=2)
BEAT_EVERY_S = max(HEARTBEAT_TTL_S / 3, 0.5)
# A queue's set outlives its last beat this long, then goes by itself.
FORGET_AFTER_S = 24 * 3600

# Score each queue's entry with the moment this beat lapses (Redis' clock) and drop lapsed entries.
_BEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
for _, k in ipairs(KEYS) do
  redis.call('ZADD', k, now + tonumber(ARGV[2]), ARGV[1])
  redis.call('ZREMRANGEBYSCORE', k, '-inf', now)
  redis.call('EXPIRE', k, ARGV[3])
end
return #KEYS
"""

_LIVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local out = {}
for i, k in ipairs(KEYS) do out[i] = redis.call('ZRANGEBYSCORE', k, now, '+inf') end
return out
"""


def key(queue: str) -> str:
    return f"{KEY_PREFIX}{queue}"


def worker_name(hostname: str) -> str:
    """A worker's entry: its Celery node name and process id (two workers given one name stay two)."""
    return f"{hostname}:{os.getpid()}"


def beat(r, queues, name: str, ttl_s: float = HEARTBEAT_TTL_S) -> None:
    """Say that worker `name` consumes `queues` and is alive for the next `ttl_s` seconds."""
    r.eval(_BEAT, len(queues), *[key(q) for q in queues], name, ttl_s, FORGET_AFTER_S)


def gone(r, queues, name: str) -> None:
    """A worker shutting down lets go at once, rather than when its beat lapses."""
    pipe = r.pipeline(transaction=False)
    for queue in queues:
        pipe.zrem(key(queue), name)
    pipe.execute()


def live(r, queues=QUEUES) -> dict[str, list[str]]:
    """The workers alive on each queue, by name, in one round trip."""
    names = r.eval(_LIVE, len(queues), *[key(q) for q in queues])
    return {q: sorted(n.decode() if isinstance(n, bytes) else n for n in found)
            for q, found in zip(queues, names, strict=True)}


class Heartbeat(bootsteps.StartStopStep):
    """A consumer bootstep that beats for the worker's queues on the worker's own timer, so a worker
    whose event loop is stuck stops beating too. Add it with `app.steps["consumer"].add(Heartbeat)`."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, c, **kwargs):
        self.tref = None
        self.r = None
        self.queues: list[str] = []
        self.name = ""
        super().__init__(c, **kwargs)

    def start(self, c):
        import redis

        url = c.app.conf.broker_url or os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
        # A probe must not wait on a slow Redis: a beat that cannot be written in 2 s is skipped.
        self.r = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2, **sync_options())
        self.queues = sorted(q.name for q in c.task_consumer.queues)
        self.name = worker_name(c.hostname or socket.gethostname())
        self._beat()
        self.tref = c.timer.call_repeatedly(BEAT_EVERY_S, self._beat)

    def _beat(self):
        try:
            beat(self.r, self.queues, self.name)
        except Exception as exc:  # noqa: BLE001 - Redis away: the beat lapses, readiness says so
            log.warning("worker heartbeat not written: %s", exc)

    def stop(self, c):
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    def shutdown(self, c):
        self.stop(c)
        if self.r is not None and self.queues:
            try:
                gone(self.r, self.queues, self.name)
            except Exception as exc:  # noqa: BLE001 - its beat lapses by itself
                log.warning("worker heartbeat not removed: %s", exc)

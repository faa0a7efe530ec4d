"""Whether this web process can serve: it is warm, its database and Redis answer, and every queue has a live
worker."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cache

import redis
from django.conf import settings
from django.db import connection

from explainer import warmup
from model_worker.contract import workers
from model_worker.contract.connection import sync_options

log = logging.getLogger(__name__)

# A probe answers within a few seconds even when Redis hangs: a load balancer takes silence as "down".
PROBE_TIMEOUT_S = 2


@dataclass(frozen=True)
class Readiness:
    database: bool
    redis: bool
    workers: dict[str, int] = field(default_factory=dict)  # live workers per queue (empty: Redis away)
    warm: bool = True  # this process has built its library index (explainer/warmup.py)

    @property
    def ready(self) -> bool:
        return (self.warm and self.database and self.redis
                and all(self.workers.get(q, 0) > 0 for q in workers.QUEUES))

    def as_dict(self) -> dict:
        """What the probe answers: verdicts and counts only (no host, address or error text)."""
        return {
            "status": "ready" if self.ready else "not ready",
            "web": "ok" if self.warm else "warming up",
            "database": "ok" if self.database else "down",
            "redis": "ok" if self.redis else "down",
            "workers": {q: self.workers.get(q, 0) for q in workers.QUEUES} if self.redis else None,
        }


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=PROBE_TIMEOUT_S, socket_connect_timeout=PROBE_TIMEOUT_S,
                                **sync_options())


def readiness() -> Readiness:
    """This process warm, one query to the database and one round trip to Redis (the workers' heartbeats)."""
    warm = warmup.done()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database = True
    except Exception as exc:  # noqa: BLE001 - any failure means not ready; the log says which
        log.warning("readiness: the database did not answer: %s", exc)
        database = False
    try:
        live = {queue: len(names) for queue, names in workers.live(_client(settings.REDIS_URL)).items()}
        return Readiness(database=database, redis=True, workers=live, warm=warm)
    except redis.RedisError as exc:
        log.warning("readiness: Redis did not answer: %s", exc)
        return Readiness(database=database, redis=False, warm=warm)

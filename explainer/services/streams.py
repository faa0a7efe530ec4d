"""Django's handle on the generation event streams (`model_worker.contract.stream`)."""

from __future__ import annotations

from functools import cache

import redis
from django.conf import settings

from model_worker.contract import stream
from model_worker.contract.connection import sync_options
from model_worker.contract.events import Event


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, **sync_options())


def redis_client() -> redis.Redis:
    return _client(settings.REDIS_URL)


def event_append(*, generation_id, event: Event) -> int:
    """Append a server event to a generation's stream, within the configured bounds."""
    return stream.append(
        redis_client(), str(generation_id), event,
        maxlen=settings.GENERATION_STREAM_MAXLEN, ttl_s=settings.GENERATION_STREAM_TTL_S,
    )

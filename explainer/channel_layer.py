"""The channel layer: channels_redis's, except that a socket's wait for group messages outlives a
Redis outage. Channels runs that wait beside the socket's own messages and closes the socket (1011)
when it raises; here it waits and tries again, so the socket stays open and answers `unavailable`."""

from __future__ import annotations

import asyncio
import logging

import redis
from channels_redis.core import RedisChannelLayer

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 5.0


class OutageTolerantRedisChannelLayer(RedisChannelLayer):
    async def receive(self, channel):
        backoff = 0.25
        while True:
            try:
                return await super().receive(channel)
            except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
                log.warning("channel layer: Redis away (%s); listening again in %.1f s", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)

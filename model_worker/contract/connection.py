"""How every Redis client of Explainer connects: stale connections are checked and retried once.

After Redis restarts, pooled connections are dead; `health_check_interval` pings one that sat idle
before using it, and one retry on a connection error reconnects instead of failing the caller.
"""

from __future__ import annotations

HEALTH_CHECK_INTERVAL_S = 10


def sync_options() -> dict:
    from redis.backoff import ExponentialBackoff
    from redis.exceptions import ConnectionError, TimeoutError
    from redis.retry import Retry

    return {"health_check_interval": HEALTH_CHECK_INTERVAL_S, "retry": Retry(ExponentialBackoff(cap=1.0), 1),
            "retry_on_error": [ConnectionError, TimeoutError]}


def async_options() -> dict:
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialBackoff
    from redis.exceptions import ConnectionError, TimeoutError

    return {"health_check_interval": HEALTH_CHECK_INTERVAL_S, "retry": Retry(ExponentialBackoff(cap=1.0), 1),
            "retry_on_error": [ConnectionError, TimeoutError]}

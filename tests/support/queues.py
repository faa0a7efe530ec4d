"""The messages waiting on the `gpu` queue, read from Redis as Celery's Redis transport stores them.

With priorities each priority step has its own list, `gpu` for 0 and `gpu\\x06\\x16<n>` for the others
(kombu's separator), emptied in step order, each from its right end.
"""

from __future__ import annotations

import base64
import json

from model_worker.contract.queues import GPU_QUEUE

PRIORITY_STEPS = (0, 3, 6, 9)  # kombu's default for Redis
SEPARATOR = "\x06\x16"


def gpu_lists() -> list[str]:
    return [GPU_QUEUE if step == 0 else f"{GPU_QUEUE}{SEPARATOR}{step}" for step in PRIORITY_STEPS]


def gpu_messages(redis_db) -> list[dict]:
    """Every waiting message, in the order a worker takes them."""
    return [json.loads(raw) for key in gpu_lists() for raw in reversed(redis_db.lrange(key, 0, -1))]


def gpu_waiting(redis_db) -> int:
    return sum(redis_db.llen(key) for key in gpu_lists())


def gpu_requests(redis_db) -> list[tuple[str, dict]]:
    """(generation id, request) of each generate_page message waiting, in the order a worker takes them,
    read from the message body (its `argsrepr` header shortens long pages)."""
    out = []
    for message in gpu_messages(redis_db):
        assert message["headers"]["task"] == "model_worker.generate_page"
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        out.append((args[0], args[1]))
    return out

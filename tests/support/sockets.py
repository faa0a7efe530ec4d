"""Helpers for tests that talk to the live server's websocket and read the rows it writes."""

from __future__ import annotations

from channels.db import database_sync_to_async

from explainer.models import Generation


async def receive_until(ws, types: set[str], seen: list[dict], *, timeout: float) -> dict:
    """Collect events until one of `types` arrives; returns it."""
    while True:
        event = await ws.receive_json_from(timeout=timeout)
        seen.append(event)
        if event["type"] in types:
            return event


@database_sync_to_async
def generation_row(generation_id) -> Generation:
    return Generation.objects.get(pk=generation_id)

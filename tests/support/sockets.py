"""Helpers for tests that talk to the live server's websocket and read the rows it writes."""

from __future__ import annotations

from channels.db import database_sync_to_async

from explainer.models import Generation

# A page's init script that records what its websockets receive in `window.socketEvents`, so a browser test
# knows when the view is connected.
SOCKET_SPY = """(() => {
  const Native = window.WebSocket;
  window.socketEvents = [];
  window.WebSocket = function (...args) {
    const ws = new Native(...args);
    ws.addEventListener('message', (e) => window.socketEvents.push(JSON.parse(e.data)));
    return ws;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
})()"""


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

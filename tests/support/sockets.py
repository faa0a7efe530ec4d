"""Helpers for tests that talk to the live server's websocket (or stand in for it) and read the rows it writes."""

from __future__ import annotations

import json
import re
import time

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


class ScriptedSocket:
    """Stands in for the server's `/ws/explain/` in a Playwright page: keeps what the page sends, and sends
    the page the events a test names, numbered within their generation as the server numbers them."""

    def __init__(self, page, timeout_s: float = 10):
        self.page, self.timeout_s = page, timeout_s
        self.received: list[dict] = []
        self.route = None
        self.ids: dict[str, int] = {}
        self.sent = 0
        page.route_web_socket(re.compile(r"/ws/explain/$"), self._accept)
        page.add_init_script(SOCKET_SPY)  # so `send` knows when the page has handled an event

    def _accept(self, route):
        self.route = route
        route.on_message(lambda text: self.received.append(json.loads(text)))
        route.send(json.dumps({"type": "hello", "id": 0, "protocol": 1}))
        self.sent += 1

    def _wait(self, found, what: str):
        # Playwright hands the page's messages over only while the test is inside one of its calls.
        deadline = time.monotonic() + self.timeout_s
        while not found():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}; the page sent {self.received}")
            self.page.wait_for_timeout(20)
        return found()

    def wait_for(self, type: str) -> dict:
        """The page's latest message of `type`, once it has sent one."""
        return self._wait(lambda: next((m for m in reversed(self.received) if m["type"] == type), None),
                          f"the page sent no {type!r}")

    def send(self, type: str, generation: str | None = None, **fields) -> None:
        """One event, returning once the page has handled it; an event of a generation gets that
        generation's next id, any other id 0."""
        route = self._wait(lambda: self.route, "the page opened no socket")
        event = {"type": type, "id": 0, **fields}
        if generation:
            self.ids[generation] = event["id"] = self.ids.get(generation, 0) + 1
            event["generation"] = generation
        route.send(json.dumps(event, ensure_ascii=False))
        self.sent += 1
        self.page.wait_for_function("n => window.socketEvents.length >= n", arg=self.sent,
                                    timeout=self.timeout_s * 1000)

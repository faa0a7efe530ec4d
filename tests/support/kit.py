"""Waiting on a kit page in Playwright."""

from __future__ import annotations

import time


def kit_state(page, timeout_s: float = 20.0) -> str:
    """The kit state once it leaves `loading`, or "loading" after `timeout_s`.

    Polled from Python: the pages' CSP forbids the eval that `wait_for_function` needs.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = page.evaluate("document.documentElement.dataset.kitState")
        if state != "loading":
            return state
        page.wait_for_timeout(50)
    return "loading"

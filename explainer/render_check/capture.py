"""Pictures of the page under check that do not wait on a busy compositor.

Judged pixels are read from the canvas itself (`toDataURL`; the init script keeps WebGL drawing
buffers), so a slow software renderer delays nothing but the page's own next frame. Screenshots are
only for the pictures a person looks at (thumbnail, report); each gets a bounded time and, on a
timeout, the canvas stands in for it.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass

from playwright.async_api import TimeoutError as PlaywrightTimeout

from . import probe


class CanvasUnreadable(RuntimeError):
    """The canvas could not be read (gone, tainted, or the page did not answer in time)."""


async def read_canvas(page, index: int, *, timeout_s: float) -> bytes:
    """The drawn pixels of the page's `index`-th canvas, as PNG."""
    try:
        url = await asyncio.wait_for(page.evaluate(probe.CANVAS_PNG, index), timeout_s)
    except TimeoutError:
        raise CanvasUnreadable(f"the page did not hand over its canvas within {timeout_s:g} s") from None
    if not isinstance(url, str) or not url.startswith("data:image/png;base64,"):
        raise CanvasUnreadable(f"the canvas could not be read: {url}")
    return base64.b64decode(url.split(",", 1)[1])


async def screenshot_or_none(page, *, clip: dict, timeout_s: float) -> bytes | None:
    """A screenshot of `clip`, or None when the compositor does not deliver one within `timeout_s`."""
    try:
        return await page.screenshot(clip=clip, animations="disabled", caret="initial", timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        return None


@dataclass
class Picture:
    png: bytes
    source: str  # "screenshot", or "canvas" when the screenshot timed out


async def picture(page, *, canvas_index: int | None, timeout_s: float, canvas_timeout_s: float | None = None) -> Picture:
    """A screenshot of the viewport, bounded in time; the canvas instead when the compositor is too busy.

    The canvas read is the last resort, so it may take longer (`canvas_timeout_s`): on a starved CPU
    software WebGL can take more than the screenshot's bound to hand over even a paused page's pixels.
    """
    try:
        png = await page.screenshot(animations="disabled", caret="initial", timeout=timeout_s * 1000)
        return Picture(png, "screenshot")
    except PlaywrightTimeout:
        if canvas_index is None:
            raise
    return Picture(await read_canvas(page, canvas_index, timeout_s=canvas_timeout_s or timeout_s), "canvas")

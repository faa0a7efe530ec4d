"""One warm Chromium per process, driven from one event loop on its own thread.

Callers (Celery worker, Django view, management command, pytest) may sit in any thread or inside
another event loop, so every use goes through `run()`, which schedules the work on the browser's
loop and waits for it. Each check opens a fresh context, so pages never share state, while the
browser stays up between pages. The async API lets a timeout cancel a check even when the page's
main thread is stuck in a loop: cancelling closes the context, which kills its renderer.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from .browser import launch_options
from .images import ImageTools

T = TypeVar("T")


class BrowserGone(RuntimeError):
    """The browser could not be started or stopped answering: the check could not run."""


class CheckTimedOut(RuntimeError):
    """The work ran past its time limit and was cancelled (its context closed, the browser kept)."""


class BrowserPool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright = None
        self._browser = None
        self._images: ImageTools | None = None

    def run(self, work: Callable[..., Awaitable[T]], *, timeout_s: float) -> T:
        """Await `work(browser, images)` on the browser's loop; CheckTimedOut after `timeout_s`."""
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(self._call(work, timeout_s), loop)
        try:
            return future.result(timeout=timeout_s + 15)
        except FutureTimeout:
            future.cancel()
            raise BrowserGone(f"the browser did not answer within {timeout_s:.0f} s") from None

    def close(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop(), loop).result(timeout=10)
        except (RuntimeError, FutureTimeout):
            pass  # at interpreter exit the Playwright driver takes Chromium down with it
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=5)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="render-check-browser", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    async def _call(self, work: Callable[..., Awaitable[T]], timeout_s: float) -> T:
        if self._browser is None or not self._browser.is_connected():
            await self._start()
        try:
            return await asyncio.wait_for(work(self._browser, self._images), timeout_s)
        except TimeoutError:
            raise CheckTimedOut(f"the check did not finish within {timeout_s:.0f} s") from None

    async def _start(self) -> None:
        from playwright.async_api import async_playwright

        await self._stop()
        try:
            self._playwright = await async_playwright().start()
            self._browser = await self._playwright.chromium.launch(**launch_options())
            self._images = await ImageTools.open(self._browser)
        except Exception as exc:
            await self._stop()
            raise BrowserGone(f"could not start Chromium: {exc}") from exc

    async def _stop(self) -> None:
        for closer in (
            getattr(self._images, "close", None),
            getattr(self._browser, "close", None),
            getattr(self._playwright, "stop", None),
        ):
            if closer is not None:
                try:
                    await closer()
                except Exception:  # noqa: BLE001 - a dead browser cannot be closed twice
                    pass
        self._images = self._browser = self._playwright = None


_pool: BrowserPool | None = None
_pool_lock = threading.Lock()


def get_pool() -> BrowserPool:
    """The process's pool, created on first use (so a forking worker starts it in the child)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = BrowserPool()
            atexit.register(_pool.close)
        return _pool

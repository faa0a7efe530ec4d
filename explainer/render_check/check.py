"""The render check: load a generated page in Chromium under the production sandbox and judge it.

One core, `check_html`; `check_file` and `check_page` feed it. This module runs the steps in order
and bounds each in time; the verdicts come from `judges.py` (see docs/render-check.md).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Error as PlaywrightError

from explainer.pages.policy import origin_of

from . import judges, probe
from .accessibility import judge_accessibility
from .capture import CanvasUnreadable, picture
from .pool import BrowserGone, CheckTimedOut, get_pool
from .quiz import judge_quiz
from .report import RenderReport
from .servers import page_server

DESKTOP = {"width": 800, "height": 500}  # a laptop-ish window; small enough that SwiftShader keeps up


@dataclass(frozen=True)
class CheckOptions:
    ready_timeout_s: float = 5.0
    navigation_timeout_s: float = 10.0
    shot_times_s: tuple[float, float] = (0.5, 1.5)  # after ready: does the scene move on its own?
    step_ms: int = 50  # page time let run after each scripted action, with the page's clock paused
    min_content_px: int = 100  # fewer pixels off the background colour than this is a blank canvas
    thumbnail_width: int = 320
    step_timeout_s: float = 15.0  # any one Playwright call; SwiftShader on a busy CPU is slow to paint
    shot_timeout_s: float = 5.0  # one screenshot or canvas read; a screenshot past it becomes a canvas read
    total_timeout_s: float = 75.0


DEFAULTS = CheckOptions()


def check_html(html: str, *, base_url: str | None = None, options: CheckOptions = DEFAULTS) -> RenderReport:
    """Check one page, served with the production headers from 127.0.0.1.

    `base_url`: an origin (e.g. a running app) whose /static/ the page should load; by default
    the project's own static/ folder.
    """
    server = page_server(origin_of(base_url) if base_url else None)
    url = server.add_page(html)
    started = time.monotonic()
    try:
        report = get_pool().run(
            lambda browser, images: _check(browser, images, html, url, options=options),
            timeout_s=options.total_timeout_s,
        )
    except CheckTimedOut as exc:
        report = RenderReport(url=url)
        report.add("ready", False, f"the page kept the browser busy: {exc}")
    except BrowserGone as exc:
        report = RenderReport(url=url, error=str(exc))
        report.add("ready", False, f"the render check could not run: {exc}")
    finally:
        server.remove_page(url)
    report.timings["total_s"] = time.monotonic() - started
    return report


def check_file(path: str | Path, *, options: CheckOptions = DEFAULTS) -> RenderReport:
    return check_html(Path(path).read_text(encoding="utf-8"), options=options)


def check_page(page_id: int, *, options: CheckOptions = DEFAULTS) -> RenderReport:
    """Check a stored PageVersion (raises PageVersion.DoesNotExist)."""
    from explainer.models import PageVersion

    html = PageVersion.objects.values_list("html", flat=True).get(pk=page_id)
    return check_html(html, options=options)


async def _check(browser, images, html: str, url: str, *, options: CheckOptions) -> RenderReport:
    report = RenderReport(url=url)
    context = await browser.new_context(viewport=DESKTOP, device_scale_factor=1, service_workers="block")
    context.set_default_timeout(options.step_timeout_s * 1000)
    try:
        page = await context.new_page()
        await page.add_init_script(probe.INIT_SCRIPT)
        _listen(page, report)
        try:
            await _run_checks(page, images, html, report, options)
        except (PlaywrightError, CanvasUnreadable) as exc:
            # A step that timed out or a page that crashed: a verdict on the page, with what was seen so far.
            done = ", ".join(report.timings) or "nothing"
            report.add("browser", False, f"the check stopped after {done}: {_first_line(exc)}")
            judges.judge_messages(report)
    finally:
        await context.close()  # also kills a renderer stuck in a loop
    return report


def _listen(page, report: RenderReport) -> None:
    def on_console(message) -> None:
        if message.type != "error":
            return
        text = message.text
        if text.startswith("Refused to") or "Content Security Policy" in text:
            report.blocked_requests.append({"directive": "", "blocked": "", "message": text})
        elif text.startswith("Failed to load resource"):
            pass  # the response listener records which request, with its status
        else:
            report.console_errors.append(text)

    def on_response(response) -> None:
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            report.failed_requests.append({"url": response.url, "status": response.status})

    def on_request_failed(request) -> None:
        failure = request.failure or ""
        if "BLOCKED_BY_CSP" in failure or "blocked" in failure.lower():
            report.blocked_requests.append({"directive": "", "blocked": request.url, "message": failure})
        else:
            report.failed_requests.append({"url": request.url, "status": 0, "error": failure})

    page.on("console", on_console)
    page.on("pageerror", lambda error: report.page_errors.append(f"{error.name}: {error.message}"))
    page.on("response", on_response)
    page.on("requestfailed", on_request_failed)


async def _run_checks(page, images, html: str, report: RenderReport, options: CheckOptions) -> None:
    t0 = time.monotonic()
    try:
        await page.goto(report.url, wait_until="load", timeout=options.navigation_timeout_s * 1000)
    except Exception as exc:  # noqa: BLE001 - any navigation failure is the page's verdict
        report.add("ready", False, f"the page did not load: {_first_line(exc)}")
        await judges.collect_page_state(page, report)
        judges.judge_messages(report)
        return
    report.timings["load_s"] = time.monotonic() - t0

    await judges.judge_ready(page, html, report, options)
    report.timings["ready_s"] = time.monotonic() - t0
    if not report.checks["ready"].passed:
        await judges.collect_page_state(page, report)
        judges.judge_messages(report)
        return

    # The page runs on its own clock until the second timed look, read from the canvas itself.
    box = await page.evaluate(probe.CANVAS_BOX)
    observer = judges.Observer(page, images, box, options)
    ready_at = time.monotonic()
    first_at, last_at = options.shot_times_s
    await _sleep_until(ready_at + first_at)
    first = await observer.look()
    await _sleep_until(ready_at + last_at)
    last = await observer.look()
    # From here on the page's clock is paused and only the check moves it: the page draws a frame
    # when told, so its main thread is idle for every picture and read, however slow its frames are.
    await page.clock.install()
    await page.clock.pause_at(int(time.time() * 1000) + 100)
    if box and last.shot is None:
        last = await observer.observe()  # too busy while running: read the paused page instead
    if box:
        report.screenshots.update({f"canvas@{last_at}s": last.shot})
        if first.shot is not None:
            report.screenshots[f"canvas@{first_at}s"] = first.shot
    shot = await picture(page, canvas_index=box["index"] if box else None, timeout_s=options.shot_timeout_s,
                         canvas_timeout_s=options.step_timeout_s)
    report.screenshots[f"page@{last_at}s"] = shot.png
    if shot.source != "screenshot":
        report.metrics.setdefault("pictures_from_canvas", []).append(f"page@{last_at}s")
    await judges.judge_canvas(images, box, first.shot, last.shot, report, options)
    report.timings["shots_s"] = time.monotonic() - t0

    await judges.judge_interaction(page, observer, box, report, options)
    report.timings["interaction_s"] = time.monotonic() - t0

    await judge_quiz(page, report)
    report.timings["quiz_s"] = time.monotonic() - t0

    await judges.judge_overflow(page, box, report, options)
    report.timings["overflow_s"] = time.monotonic() - t0

    await page.clock.resume()  # axe-core waits on timers of its own
    await judge_accessibility(page, report)
    report.timings["accessibility_s"] = time.monotonic() - t0

    report.thumbnail = await images.thumbnail(shot.png, options.thumbnail_width)
    await judges.collect_page_state(page, report)
    judges.judge_messages(report)
    report.timings["judged_s"] = time.monotonic() - t0


async def _sleep_until(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.monotonic()))


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

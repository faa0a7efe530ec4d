"""The render check: load a generated page in Chromium under the production sandbox and judge it.

One core, `check_html`; `check_file` and `check_page` feed it. Checks (see docs/render-check.md):
ready, errors, csp, network, canvas, interaction, overflow (all required) and animates (reported).
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Error as PlaywrightError

from explainer.pages.policy import origin_of

from . import probe
from .pool import BrowserGone, CheckTimedOut, get_pool
from .quiz import judge_quiz
from .report import RenderReport
from .server import PageServer

DESKTOP = {"width": 800, "height": 500}  # a laptop-ish window; small enough that SwiftShader keeps up
PHONE = {"width": 390, "height": 844}


@dataclass(frozen=True)
class CheckOptions:
    ready_timeout_s: float = 5.0
    navigation_timeout_s: float = 10.0
    shot_times_s: tuple[float, float] = (0.5, 1.5)  # after ready: does the scene move on its own?
    step_ms: int = 50  # page time let run after each scripted action, with the page's clock paused
    min_content_px: int = 100  # fewer pixels off the background colour than this is a blank canvas
    thumbnail_width: int = 320
    step_timeout_s: float = 15.0  # any one Playwright call; SwiftShader on a busy CPU is slow to paint
    total_timeout_s: float = 75.0


DEFAULTS = CheckOptions()
_KIT_REFERENCE = re.compile(r"""["'(/]kit/|/static/kit\b""")
_servers: dict[str | None, PageServer] = {}
_servers_lock = threading.Lock()


def page_server(static_from: str | None = None) -> PageServer:
    """The process's HTTP server for pages under check (one per source of static/)."""
    with _servers_lock:
        if static_from not in _servers:
            _servers[static_from] = PageServer(_static_root(), upstream=static_from)
        return _servers[static_from]


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


def _static_root() -> Path:
    from django.conf import settings

    if settings.configured and getattr(settings, "STATICFILES_DIRS", None):
        return Path(settings.STATICFILES_DIRS[0])
    return Path(__file__).resolve().parents[2] / "static"


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
        except PlaywrightError as exc:
            # A step that timed out or a page that crashed: a verdict on the page, with what was seen so far.
            done = ", ".join(report.timings) or "nothing"
            report.add("browser", False, f"the check stopped after {done}: {_first_line(exc)}")
            _judge_messages(report)
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
        await _collect_page_state(page, report)
        _judge_messages(report)
        return
    report.timings["load_s"] = time.monotonic() - t0

    await _wait_ready(page, html, report, options)
    report.timings["ready_s"] = time.monotonic() - t0
    if not report.checks["ready"].passed:
        await _collect_page_state(page, report)
        _judge_messages(report)
        return

    box = await page.evaluate(probe.CANVAS_BOX)
    observer = _Observer(page, images, box)
    ready_at = time.monotonic()
    first_at, last_at = options.shot_times_s
    await _sleep_until(ready_at + first_at)
    first = await observer.observe()
    await _sleep_until(ready_at + last_at)
    last = await observer.observe()
    report.screenshots.update(
        {f"canvas@{first_at}s": first.shot, f"canvas@{last_at}s": last.shot} if box else {}
    )
    page_shot = await page.screenshot(animations="allow", caret="initial")
    report.screenshots[f"page@{last_at}s"] = page_shot
    await _judge_canvas(images, box, first.shot, last.shot, report, options)
    report.timings["shots_s"] = time.monotonic() - t0

    await _judge_interaction(page, observer, box, report, options)
    report.timings["interaction_s"] = time.monotonic() - t0

    await judge_quiz(page, report)
    report.timings["quiz_s"] = time.monotonic() - t0

    await _judge_overflow(page, report)
    report.timings["overflow_s"] = time.monotonic() - t0

    report.thumbnail = await images.thumbnail(page_shot, options.thumbnail_width)
    await _collect_page_state(page, report)
    _judge_messages(report)


async def _wait_ready(page, html: str, report: RenderReport, options: CheckOptions) -> None:
    uses_kit = bool(_KIT_REFERENCE.search(html))
    deadline = time.monotonic() + options.ready_timeout_s
    state = await _state(page)
    while True:
        if state.get("kitState") in {"ready", "error"}:
            break
        uses_kit = uses_kit or state.get("kitState") is not None
        if not uses_kit or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
        state = await _state(page)
    kit_state = state.get("kitState")
    if kit_state == "ready":
        report.add("ready", True, "the kit signalled ready")
    elif kit_state == "error":
        errors = "; ".join(state.get("kitErrors") or []) or "no message"
        report.add("ready", False, f"the kit reported an error instead of ready: {errors}")
    elif uses_kit:
        report.add(
            "ready", False,
            f"the page never signalled ready within {options.ready_timeout_s:g} s (kitState={kit_state!r})",
        )
    else:
        await _frames(page)
        report.add("ready", True, "loaded (the page does not use the kit, so no ready signal to wait for)")


async def _judge_canvas(images, box, first: bytes, last: bytes, report: RenderReport, options: CheckOptions) -> None:
    if not box:
        report.add("canvas", False, "no visible canvas on the page")
        report.add("animates", False, "no canvas to watch", required=False)
        return
    stats = await images.stats(last)
    report.metrics["canvas"] = {**box, **stats}
    drawn = stats["off_dominant"]
    if drawn < options.min_content_px:
        report.add("canvas", False, f"the canvas is blank: {drawn} px differ from its background colour")
    else:
        report.add("canvas", True, f"{drawn} of {stats['pixels']} px drawn, {stats['colors']} colours")
    moved = (await images.diff(first, last))["changed"]
    report.metrics["motion_px"] = moved
    span = f"{options.shot_times_s[0]:g} s and {options.shot_times_s[-1]:g} s"
    report.add("animates", moved >= options.min_content_px, f"{moved} px changed between {span}", required=False)


@dataclass
class _Moment:
    mutations: int
    shot: bytes | None
    open_part: object


class _Observer:
    """Snapshots of what a user could see change: DOM mutations so far, the canvas, the open part."""

    def __init__(self, page, images, box) -> None:
        self.page, self.images = page, images
        self.clip = _clip(box) if box else None

    async def observe(self) -> _Moment:
        state = await _state(self.page)
        shot = await self.page.screenshot(clip=self.clip, animations="allow", caret="initial") if self.clip else None
        return _Moment(state["mutations"], shot, state.get("openPart"))

    async def change(self, before: _Moment, after: _Moment) -> tuple[int, int]:
        pixels = (await self.images.diff(before.shot, after.shot))["changed"] if self.clip else 0
        return after.mutations - before.mutations, pixels


async def _judge_interaction(page, observer: _Observer, box, report: RenderReport, options: CheckOptions) -> None:
    """Move a slider and click a part (or the canvas centre); each must change the canvas or the DOM.

    DOM changes inside the slider's own row (its readout echoing the value) do not count.

    The page's clock is paused meanwhile and advanced by the same `step_ms` after each action and
    once without one, so a scene that moves by itself is not taken for one that responds.
    """
    await page.clock.install()
    await page.clock.pause_at(int(time.time() * 1000) + 100)

    async def step() -> _Moment:
        await page.clock.run_for(options.step_ms)
        return await observer.observe()

    async def idle() -> tuple[_Moment, int, int]:
        start = await step()
        before = await step()
        return (before, *await observer.change(start, before))

    before, idle_dom, idle_px = await idle()

    def threshold(idle_px: int) -> int:
        return 2 * idle_px + options.min_content_px

    def responded(dom: int, pixels: int) -> bool:
        return dom > idle_dom or pixels > threshold(idle_px)

    results: dict[str, dict] = {}
    # The slider goes first: an info panel opened by the click could cover what the slider moves.
    slider = page.locator('input[type="range"]:visible').first
    if await slider.count():
        # A scene that moves by itself moves faster at some moments than others, so a slider whose
        # change is lost in one idle step's motion gets a second try, moved back the other way.
        for attempt in range(2):
            if attempt:
                before, idle_dom, idle_px = await idle()
            info = await slider.evaluate(probe.SLIDER_INFO)
            await slider.evaluate(probe.QUIET_CONTROL)
            # The keyboard moves a range input as a user would and cannot land on an overlay instead.
            await slider.focus()
            await page.keyboard.press(info["key"])
            after = await step()
            await page.evaluate(probe.UNQUIET)
            dom, pixels = await observer.change(before, after)
            value = await slider.input_value()
            results["slider"] = {"what": f"slider {info['label']!r} {info['value']} -> {value}",
                                 "dom_mutations": dom, "canvas_px": pixels,
                                 "canvas_changed": pixels > threshold(idle_px), "attempts": attempt + 1,
                                 "responded": value != info["value"] and responded(dom, pixels)}
            before = after
            if results["slider"]["responded"]:
                break

    part = await page.evaluate(probe.KIT_PART_POINT)
    if part and part.get("x") is not None:
        target, what = (part["x"], part["y"]), f"click on part {part['name']!r}"
    elif box:
        target, what = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2), "click on the canvas centre"
    else:
        target, what = None, None
    if target:
        await page.mouse.click(*target)
        after = await step()
        dom, pixels = await observer.change(before, after)
        opened = after.open_part is not None and after.open_part != before.open_part
        results["click"] = {"what": what, "dom_mutations": dom, "canvas_px": pixels, "part_opened": opened,
                            "canvas_changed": pixels > threshold(idle_px), "responded": opened or responded(dom, pixels)}

    await page.clock.resume()
    report.metrics["interaction"] = {"idle_dom_mutations": idle_dom, "idle_canvas_px": idle_px, **results}
    required = []
    if part and part.get("count"):
        required.append("click")  # a kit page promises clickable parts
    if "slider" in results:
        required.append("slider")
    if not required and "click" in results:
        required.append("click")  # a page without kit parts or sliders must at least answer a click
    if not required:
        report.add("interaction", False, "nothing to interact with: no canvas, no kit parts, no slider")
        return
    silent = [name for name in required if not results.get(name, {}).get("responded")]
    described = "; ".join(
        f"{r['what']}: {r['dom_mutations']} DOM changes, {r['canvas_px']} px" for r in results.values()
    )
    if silent:
        report.add("interaction", False, f"no response to {' and '.join(silent)} ({described})")
    else:
        report.add("interaction", True, described)


async def _judge_overflow(page, report: RenderReport) -> None:
    await page.set_viewport_size(PHONE)
    await _frames(page)
    found = await page.evaluate(probe.OVERFLOW)
    report.metrics["overflow"] = found
    report.screenshots["page@390px"] = await page.screenshot(animations="allow", caret="initial")
    if found["scroll"] > found["width"] + 1:
        where = ", ".join(found["offenders"]) or "unknown element"
        report.add("overflow", False, f"{found['scroll']} px wide at {found['width']} px: {where}")
    else:
        report.add("overflow", True, f"fits {found['width']} px")


async def _collect_page_state(page, report: RenderReport) -> None:
    try:
        state = await asyncio.wait_for(_state(page), 2)
    except Exception:  # noqa: BLE001 - a crashed or hung page has no state to read
        return
    for violation in state.get("violations", []):
        report.blocked_requests.append(violation)
    for message in state.get("kitErrors", []):
        if not any(message in seen for seen in report.page_errors):
            report.page_errors.append(message)


def _judge_messages(report: RenderReport) -> None:
    errors = report.page_errors + report.console_errors
    report.add("errors", not errors, "; ".join(errors[:5]) or "no console or page errors")
    blocked = _dedupe_blocked(report.blocked_requests)
    report.blocked_requests = blocked
    described = ", ".join(f"{b.get('directive') or '?'} {b.get('blocked') or b.get('message', '')}" for b in blocked)
    report.add("csp", not blocked, f"blocked by the policy: {described}" if blocked else "nothing blocked")
    failed = report.failed_requests
    report.add("network", not failed,
               ", ".join(f"{f['url']} ({f.get('status') or f.get('error')})" for f in failed) or "all requests ok")


def _dedupe_blocked(blocked: list[dict]) -> list[dict]:
    """Violation events carry the detail; a console line only counts when no event explains it."""
    events = [b for b in blocked if b.get("directive")]
    if events:
        unique = {(b["directive"], b["blocked"]): b for b in events}
        return list(unique.values())
    return blocked


async def _sleep_until(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.monotonic()))


async def _state(page) -> dict:
    return await page.evaluate(probe.STATE)


async def _frames(page) -> None:
    try:
        await asyncio.wait_for(page.evaluate(probe.NEXT_FRAMES), 1.0)
    except TimeoutError:
        pass  # no frames means nothing more to wait for


def _clip(box: dict) -> dict:
    return {k: box[k] for k in ("x", "y", "width", "height")}


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

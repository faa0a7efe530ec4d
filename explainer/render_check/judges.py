"""The judges: each looks at one aspect of the loaded page and adds its verdict to the report.

ready, canvas (+ animates, reported only), interaction, overflow, and errors / csp / network from
what the page said while it ran. `check.py` runs them in order on one page.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass

from . import probe
from .capture import CanvasUnreadable, picture, read_canvas, screenshot_or_none
from .report import RenderReport

PHONE = {"width": 390, "height": 844}
_KIT_REFERENCE = re.compile(r"""["'(/]kit/|/static/kit\b""")


async def judge_ready(page, html: str, report: RenderReport, options) -> None:
    uses_kit = bool(_KIT_REFERENCE.search(html))
    deadline = time.monotonic() + options.ready_timeout_s
    state = await page_state(page)
    while True:
        if state.get("kitState") in {"ready", "error"}:
            break
        uses_kit = uses_kit or state.get("kitState") is not None
        if not uses_kit or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
        state = await page_state(page)
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
        await next_frames(page)
        report.add("ready", True, "loaded (the page does not use the kit, so no ready signal to wait for)")


async def judge_canvas(images, box, first: bytes | None, last: bytes, report: RenderReport, options) -> None:
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
    span = f"{options.shot_times_s[0]:g} s and {options.shot_times_s[-1]:g} s"
    if first is None:
        report.add("animates", False, f"not watched: the page was too busy to hand over its canvas at {span}",
                   required=False)
        return
    moved = (await images.diff(first, last))["changed"]
    report.metrics["motion_px"] = moved
    report.add("animates", moved >= options.min_content_px, f"{moved} px changed between {span}", required=False)


@dataclass
class Moment:
    mutations: int
    shot: bytes | None  # the canvas's own pixels
    open_part: object
    screen: bytes | None = None  # what the user sees over the canvas too (cards, slider thumbs), if taken in time


class Observer:
    """Snapshots of what a user could see change: DOM mutations so far, the canvas, the open part.

    The canvas is always read directly. With `screen`, the canvas's box is also screenshotted (what
    a user sees there, the kit's cards included) under a bounded time; two moments are compared on
    their screenshots when both have one, else on their canvas pixels.
    """

    def __init__(self, page, images, box, options) -> None:
        self.page, self.images, self.options = page, images, options
        self.canvas = box["index"] if box else None
        self.clip = {k: box[k] for k in ("x", "y", "width", "height")} if box else None
        self.screenshots_missed = 0

    async def look(self) -> Moment:
        """`observe` while the page runs on its own clock: a canvas it is too busy to hand over is None."""
        try:
            return await self.observe()
        except CanvasUnreadable:
            state = await page_state(self.page)
            return Moment(state["mutations"], None, state.get("openPart"))

    async def observe(self, *, screen: bool = False) -> Moment:
        state = await page_state(self.page)
        shot = shown = None
        if self.canvas is not None:
            shot = await read_canvas(self.page, self.canvas, timeout_s=self.options.shot_timeout_s)
            if screen:
                shown = await screenshot_or_none(self.page, clip=self.clip, timeout_s=self.options.shot_timeout_s)
                self.screenshots_missed += shown is None
        return Moment(state["mutations"], shot, state.get("openPart"), shown)

    async def change(self, before: Moment, after: Moment) -> tuple[int, int]:
        if self.canvas is None:
            return after.mutations - before.mutations, 0
        pair = (before.screen, after.screen) if before.screen and after.screen else (before.shot, after.shot)
        return after.mutations - before.mutations, (await self.images.diff(*pair))["changed"]


async def judge_interaction(page, observer: Observer, box, report: RenderReport, options) -> None:
    """Move a slider and click a part (or the canvas centre); each must change the canvas or the DOM.

    DOM changes inside the slider's own row (its readout echoing the value) do not count.

    The page's clock is paused (by the caller) and advanced by the same `step_ms` after each action
    and once without one, so a scene that moves by itself is not taken for one that responds. The
    idle motion is measured before the action and again after it, and the smaller counts: a slider
    that stops the motion (0 volts) is judged against the still scene it leaves, not the busy one.
    """

    async def step() -> Moment:
        await page.clock.run_for(options.step_ms)
        return await observer.observe(screen=True)

    async def idle() -> tuple[Moment, int, int]:
        start = await step()
        before = await step()
        return (before, *await observer.change(start, before))

    async def settle(after: Moment) -> tuple[Moment, int]:
        settled = await step()
        return settled, (await observer.change(after, settled))[1]

    before, idle_dom, idle_px = await idle()

    def threshold(idle_px: int) -> int:
        return 2 * idle_px + options.min_content_px

    def responded(dom: int, pixels: int, idle_px: int) -> bool:
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
            before, idle_after = await settle(after)
            still = min(idle_px, idle_after)
            value = await slider.input_value()
            results["slider"] = {"what": f"slider {info['label']!r} {info['value']} -> {value}",
                                 "dom_mutations": dom, "canvas_px": pixels, "idle_after_px": idle_after,
                                 "canvas_changed": pixels > threshold(still), "attempts": attempt + 1,
                                 "responded": value != info["value"] and responded(dom, pixels, still)}
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
        _, idle_after = await settle(after)
        still = min(idle_px, idle_after)
        results["click"] = {"what": what, "dom_mutations": dom, "canvas_px": pixels, "part_opened": opened,
                            "idle_after_px": idle_after, "canvas_changed": pixels > threshold(still),
                            "responded": opened or responded(dom, pixels, still)}

    report.metrics["interaction"] = {"idle_dom_mutations": idle_dom, "idle_canvas_px": idle_px,
                                     "screenshots_missed": observer.screenshots_missed, **results}
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


async def judge_overflow(page, box, report: RenderReport, options) -> None:
    """At phone width nothing may stick out sideways; the page's clock stays paused, one step lets it redraw."""
    await page.set_viewport_size(PHONE)
    await page.clock.run_for(options.step_ms)
    found = await page.evaluate(probe.OVERFLOW)
    report.metrics["overflow"] = found
    shot = await picture(page, canvas_index=box["index"] if box else None, timeout_s=options.shot_timeout_s,
                         canvas_timeout_s=options.step_timeout_s)
    report.screenshots["page@390px"] = shot.png
    if shot.source != "screenshot":
        report.metrics.setdefault("pictures_from_canvas", []).append("page@390px")
    if found["scroll"] > found["width"] + 1:
        where = ", ".join(found["offenders"]) or "unknown element"
        report.add("overflow", False, f"{found['scroll']} px wide at {found['width']} px: {where}")
    else:
        report.add("overflow", True, f"fits {found['width']} px")


async def collect_page_state(page, report: RenderReport) -> None:
    try:
        state = await asyncio.wait_for(page_state(page), 2)
    except Exception:  # noqa: BLE001 - a crashed or hung page has no state to read
        return
    for violation in state.get("violations", []):
        report.blocked_requests.append(violation)
    for message in state.get("kitErrors", []):
        if not any(message in seen for seen in report.page_errors):
            report.page_errors.append(message)


def judge_messages(report: RenderReport) -> None:
    """errors, csp and network: from what the page logged and requested while it ran."""
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


async def page_state(page) -> dict:
    return await page.evaluate(probe.STATE)


async def next_frames(page) -> None:
    try:
        await asyncio.wait_for(page.evaluate(probe.NEXT_FRAMES), 1.0)
    except TimeoutError:
        pass  # no frames means nothing more to wait for

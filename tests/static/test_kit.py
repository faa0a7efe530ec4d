"""The page kit in real Chromium: readiness and errors reach the parent, parts open, controls drive the scene."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from tests.support.kit import kit_state

pytestmark = pytest.mark.browser

IMPORT_MAP = (
    '{"imports": {"three": "/static/vendor/three/three.module.js", '
    '"three/addons/": "/static/vendor/three/addons/", "kit": "/static/kit/kit.js"}}'
)

# A page using most of the kit: two parts, a legend, a timeline moving one part, a slider, narration.
SOLAR = """
import { start } from "kit";
const app = start({ title: "Earth and Sun", intro: "Earth goes round the Sun once a year.",
                    lights: "space", camera: [0, 6, 10] });
const sun = app.part(app.sphere({ radius: 1.2, color: "#ffcc55", glow: true }),
                     { title: {en: "Sun", zh: "太阳"}, text: {en: "Our star.", zh: "我们的恒星。"} });
const earth = app.part(app.sphere({ radius: 0.6, color: "#3a7bd5", at: [5, 0, 0] }),
                       { title: {en: "Earth", zh: "地球"}, text: "Third planet." });
app.circle({ radius: 5 });
app.legend([{ color: "#ffcc55", text: "Sun" }, { color: "#3a7bd5", text: "Earth" }]);
const year = app.timeline({ duration: 12, label: "Month", format: (t) => `month ${Math.floor(t) + 1}` });
year.add("orbit", (t, p) => earth.position.set(5 * Math.cos(p * 2 * Math.PI), 0, -5 * Math.sin(p * 2 * Math.PI)));
window.sizes = [];
app.slider({ label: "Sun size", min: 0.5, max: 2, step: 0.1, value: 1 }, (v) => { sun.scale.setScalar(v); window.sizes.push(v); });
app.steps([{ title: "Spring", text: "March.", at: 0 }, { title: "Autumn", text: "September.", at: 6 }]);
"""

QUIZ = SOLAR + """
window.quiz = app.quiz([
  { q: {en: "What does Earth go round?", zh: "地球绕着什么转？"}, options: [{en: "The Sun", zh: "太阳"}, {en: "The Moon", zh: "月亮"}],
    answer: 0, feedback: [{en: "Yes: once a year.", zh: "对，一年一圈。"}, {en: "No: the Moon goes round Earth.", zh: "不对，是月亮绕地球。"}] },
  { q: "How long is a year?", options: ["A day", "About 365 days", "A month"], answer: 1,
    feedback: "One orbit of the Sun takes about 365 days." },
  { q: "Which is bigger?", options: ["Earth", "The Sun"], answer: 1 },
]);
"""


def page_html(script: str, lang: str = "en") -> str:
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>test</title></head>'
        f'<body><script type="importmap">{IMPORT_MAP}</script><script type="module">{script}</script></body></html>'
    )


_names = itertools.count()


def wait_until_settled(page) -> str:
    state = kit_state(page)
    assert state != "loading", "the page never became ready or reported an error"
    return state


class Opened:
    """A page under test and every error Chromium reported for it."""

    def __init__(self, page, problems):
        self.page = page
        self.problems = problems


@pytest.fixture
def open_page(browser, kit_server):
    contexts = []

    def _open(script: str, *, lang: str = "en", viewport=(1000, 700), wait=True, **context_options) -> Opened:
        name = f"p{next(_names)}.html"
        kit_server.pages[name] = page_html(script, lang)
        context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, **context_options)
        contexts.append(context)
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("request", lambda r: r.url.startswith(kit_server.url) or r.url.startswith("data:")
                or problems.append(f"request to another host: {r.url}"))
        page.goto(f"{kit_server.url}/pages/{name}")
        if wait:
            wait_until_settled(page)
        return Opened(page, problems)

    yield _open
    for context in contexts:
        context.close()


def canvas_png(page) -> bytes:
    page.wait_for_timeout(100)
    return page.locator("canvas").screenshot()


def test_a_working_page_reports_ready_to_its_parent_window(browser, kit_server):
    kit_server.pages["solar.html"] = page_html(SOLAR)
    page = browser.new_page()
    try:
        page.goto(f"{kit_server.url}/host/solar.html")
        page.wait_for_function("window.messages.some((m) => m.type === 'ready')", timeout=20_000)
        messages = page.evaluate("window.messages")
    finally:
        page.close()
    ready = [m for m in messages if m["type"] == "ready"]
    assert ready[0]["source"] == "explainer-kit"
    assert ready[0]["parts"] == ["Sun", "Earth"]
    assert ready[0]["animations"] == ["orbit"]
    assert not [m for m in messages if m["type"] == "error"]


def test_an_uncaught_error_is_posted_to_the_parent_and_marks_the_page_broken(browser, kit_server):
    kit_server.pages["broken.html"] = page_html(
        'import { start } from "kit"; const app = start({ title: "x" }); app.sphere().position.nope.x = 1;'
    )
    page = browser.new_page()
    try:
        page.goto(f"{kit_server.url}/host/broken.html")
        page.wait_for_function("window.messages.some((m) => m.type === 'error')", timeout=20_000)
        page.wait_for_timeout(300)
        messages = page.evaluate("window.messages")
    finally:
        page.close()
    errors = [m for m in messages if m["type"] == "error"]
    assert "TypeError" in errors[0]["message"]
    assert not [m for m in messages if m["type"] == "ready"], "a broken page must never report ready"


def test_a_page_that_never_starts_the_kit_is_reported_broken(open_page):
    page = open_page('import { start } from "kit"; const unused = start;').page
    assert page.evaluate("__kit.state") == "error"
    assert page.evaluate("__kit.errors") == ["Error: kit: start() was never called"]


def test_a_failing_frame_callback_is_reported_once_and_stops_being_called(open_page):
    opened = open_page('import { start } from "kit"; const app = start({}); window.calls = 0;'
                       'app.onFrame(() => { window.calls += 1; throw new Error("boom"); });')
    page = opened.page
    page.wait_for_timeout(300)
    assert page.evaluate("document.documentElement.dataset.kitState") == "error"
    assert page.evaluate("window.calls") == 1
    assert page.evaluate("__kit.errors") == ["Error: boom"]


def test_the_complete_page_in_the_kit_reference_works(browser, kit_server):
    reference = (Path(__file__).resolve().parents[2] / "docs" / "kit.md").read_text(encoding="utf-8")
    kit_server.pages["reference.html"] = re.search(r"```html\n(.*?)```", reference, re.S).group(1)
    page = browser.new_page()
    problems = []
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    try:
        page.goto(f"{kit_server.url}/pages/reference.html")
        assert wait_until_settled(page) == "ready", page.evaluate("__kit.errors")
        assert page.evaluate("__kit.parts") == ["Earth", "Moon", "Sunlight"]
        assert page.evaluate("__kit.animations") == ["orbit"]
    finally:
        page.close()
    assert problems == []


def test_a_clean_page_has_no_errors_and_loads_nothing_from_other_hosts(open_page):
    opened = open_page(SOLAR)
    assert opened.page.evaluate("__kit.state") == "ready"
    assert opened.page.evaluate("__kit.frames") >= 2
    assert opened.problems == []


def test_clicking_a_part_opens_the_panel_with_its_title_and_text(open_page):
    page = open_page(SOLAR).page
    point = page.evaluate("__kit.pointFor('Earth')")
    page.mouse.click(point["x"], point["y"])
    assert page.locator(".kit-panel").is_visible()
    assert page.locator(".kit-panel-title").inner_text() == "Earth"
    assert page.locator(".kit-panel-text").inner_text() == "Third planet."
    assert page.evaluate("__kit.openPart") == "Earth"


def test_a_part_made_of_a_thin_line_can_still_be_clicked(open_page):
    page = open_page('import { start } from "kit"; const app = start({});'
                     'app.part(app.circle({ radius: 3 }), { title: "Orbit", text: "A path." });'
                     'app.slider({ label: "x" });').page
    point = page.evaluate("__kit.pointFor('Orbit')")
    page.mouse.click(point["x"], point["y"])
    assert page.evaluate("__kit.openPart") == "Orbit"


def test_dragging_the_orbit_does_not_open_a_panel(open_page):
    page = open_page(SOLAR).page
    point = page.evaluate("__kit.pointFor('Sun')")
    page.mouse.move(point["x"], point["y"])
    page.mouse.down()
    page.mouse.move(point["x"] + 80, point["y"] + 10, steps=5)
    page.mouse.up()
    assert page.evaluate("__kit.openPart") is None


def test_a_part_label_opens_the_panel_and_escape_closes_it(open_page):
    page = open_page(SOLAR).page
    page.locator(".kit-part-label", has_text="Sun").click()
    assert page.locator(".kit-panel-title").inner_text() == "Sun"
    page.keyboard.press("Escape")
    assert page.locator(".kit-panel").is_hidden()
    assert page.evaluate("__kit.openPart") is None


def test_hovering_a_part_shows_a_pointer_cursor(open_page):
    page = open_page(SOLAR).page
    point = page.evaluate("__kit.pointFor('Sun')")
    page.mouse.move(point["x"], point["y"])
    assert page.evaluate("getComputedStyle(document.querySelector('canvas')).cursor") == "pointer"
    page.mouse.move(5, 350)
    assert page.evaluate("getComputedStyle(document.querySelector('canvas')).cursor") != "pointer"


def test_dragging_the_timeline_moves_the_scene(open_page):
    page = open_page(SOLAR).page
    page.get_by_role("button", name="Pause").click()
    page.evaluate("__kit.timeline.value = 0; __kit.timeline.dispatchEvent(new Event('input'))")
    before = canvas_png(page)
    box = page.evaluate("(() => { const r = __kit.timeline.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; })()")
    page.mouse.click(box["x"] + box["w"] * 0.4, box["y"] + box["h"] / 2)
    assert 3 < page.evaluate("__kit.time") < 6
    assert page.locator(".kit-timeline .kit-readout").inner_text().startswith("month ")
    assert canvas_png(page) != before


def test_play_advances_time_and_pause_stops_it(open_page):
    page = open_page(SOLAR).page
    page.get_by_role("button", name="Pause").click()
    stopped = page.evaluate("__kit.time")
    page.wait_for_timeout(300)
    assert page.evaluate("__kit.time") == stopped
    page.get_by_role("button", name="Play").click()
    page.wait_for_timeout(500)
    assert page.evaluate("__kit.time") > stopped


def test_narration_next_and_back_change_the_step_and_seek_the_timeline(open_page):
    page = open_page(SOLAR).page
    steps = page.locator(".kit-steps")
    assert steps.locator(".kit-step-title").inner_text() == "Spring"
    assert page.get_by_role("button", name="‹ Back").is_disabled()
    page.get_by_role("button", name="Next ›").click()
    assert steps.locator(".kit-step-title").inner_text() == "Autumn"
    assert steps.locator(".kit-step-count").inner_text() == "2 / 2"
    assert page.evaluate("__kit.time") == 6
    assert page.get_by_role("button", name="Next ›").is_disabled()
    page.get_by_role("button", name="‹ Back").click()
    assert steps.locator(".kit-step-title").inner_text() == "Spring"
    assert page.evaluate("__kit.step()") == {"index": 0, "count": 2}


def test_a_slider_reports_its_value_and_redraws_the_scene(open_page):
    page = open_page(SOLAR).page
    page.get_by_role("button", name="Pause").click()
    slider = page.evaluate("__kit.sliders.length")
    assert slider == 2
    before = canvas_png(page)
    page.locator(".kit-range").nth(1).focus()
    page.keyboard.press("End")
    assert page.evaluate("window.sizes") == [1, 2]
    assert canvas_png(page) != before


def test_every_control_is_reachable_with_the_keyboard_and_parts_open_from_it(open_page):
    page = open_page(SOLAR).page
    reached = []
    for _ in range(12):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.getAttribute('aria-label') || document.activeElement.textContent || document.activeElement.type"))
    assert {"Sun", "Earth", "Pause", "range", "Next ›"} <= set(reached)
    page.locator(".kit-parts button", has_text="Earth").focus()
    assert page.locator(".kit-parts").is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("__kit.openPart") == "Earth"


def test_the_page_fits_a_390px_phone_without_horizontal_overflow(open_page):
    long_readout = SOLAR.replace('step: 0.1, value: 1 }', 'step: 0.1, value: 1, format: (v) => `day ${v} · spring tide, the Moon and the Sun in line` }')
    page = open_page(long_readout, viewport=(390, 844), has_touch=True, is_mobile=True).page
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # A slider with a long readout keeps a track a finger can drag.
    assert all(page.locator(".kit-range").nth(i).bounding_box()["width"] >= 90 for i in range(2))
    for selector in (".kit-heading", ".kit-legend", ".kit-steps", ".kit-controls"):
        box = page.locator(selector).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, selector
    point = page.evaluate("__kit.pointFor('Sun')")
    page.touchscreen.tap(point["x"], point["y"])
    panel = page.locator(".kit-panel").bounding_box()
    assert page.evaluate("__kit.openPart") == "Sun"
    assert panel["x"] >= 0 and panel["x"] + panel["width"] <= 390


def test_a_chinese_page_gets_chinese_text_and_kit_words(open_page):
    page = open_page(SOLAR.replace("start({", 'start({ lang: "zh",'), lang="zh").page
    assert page.evaluate("__kit.parts") == ["太阳", "地球"]
    assert page.get_by_role("button", name="暂停").is_visible()
    assert page.get_by_role("button", name="下一步 ›").is_visible()
    assert page.evaluate("document.documentElement.lang") == "zh-CN"


def test_reduced_motion_keeps_the_timeline_still_until_play(open_page):
    page = open_page(SOLAR, reduced_motion="reduce").page
    page.wait_for_timeout(300)
    assert page.evaluate("__kit.time") == 0
    page.get_by_role("button", name="Play").click()
    page.wait_for_timeout(300)
    assert page.evaluate("__kit.time") > 0


def test_the_quiz_gives_feedback_on_each_answer_and_a_score_at_the_end(open_page):
    opened = open_page(QUIZ)
    page = opened.page
    assert page.evaluate("__kit.quiz.count") == 3
    page.get_by_role("button", name="✓ Check your understanding").click()
    quiz = page.get_by_role("dialog", name="Check your understanding")
    assert quiz.locator(".kit-quiz-count").inner_text() == "Question 1 of 3"
    assert quiz.locator(".kit-quiz-question").inner_text() == "What does Earth go round?"
    quiz.get_by_role("button", name="The Moon").click()
    assert quiz.locator(".kit-quiz-feedback").inner_text() == "Not quite. No: the Moon goes round Earth."
    assert quiz.get_by_role("button", name="The Sun").is_disabled()
    assert "kit-quiz-right" in quiz.get_by_role("button", name="The Sun").get_attribute("class")
    quiz.get_by_role("button", name="Next question ›").click()
    quiz.get_by_role("button", name="About 365 days").click()
    assert quiz.locator(".kit-quiz-feedback").inner_text() == "Correct! One orbit of the Sun takes about 365 days."
    page.keyboard.press("Enter")  # the focused Next button
    quiz.get_by_role("button", name="Earth").click()
    assert quiz.locator(".kit-quiz-feedback").inner_text() == "Not quite. The answer is: The Sun"
    quiz.get_by_role("button", name="See my score").click()
    assert quiz.locator(".kit-quiz-question").inner_text() == "You got 1 of 3 right."
    page.keyboard.press("Escape")
    assert quiz.is_hidden()
    assert page.evaluate("__kit.state") == "ready"
    assert opened.problems == []


def test_a_chinese_page_gets_a_chinese_quiz_that_fits_a_phone(open_page):
    page = open_page(QUIZ.replace("start({", 'start({ lang: "zh",'), lang="zh",
                     viewport=(390, 844), has_touch=True, is_mobile=True).page
    page.get_by_role("button", name="✓ 检验一下").tap()
    quiz = page.get_by_role("dialog", name="检验一下")
    assert quiz.locator(".kit-quiz-count").inner_text() == "第 1 题（共 3 题）"
    quiz.get_by_role("button", name="太阳").tap()
    assert quiz.locator(".kit-quiz-feedback").inner_text() == "答对了！对，一年一圈。"
    assert quiz.get_by_role("button", name="下一题 ›").is_visible()
    box = quiz.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_quiz_whose_answer_is_not_one_of_its_options_is_reported_as_a_page_error(open_page):
    page = open_page('import { start } from "kit"; const app = start({});'
                     'app.quiz([{ q: "Why?", options: ["a", "b"], answer: 2 }]);').page
    assert page.evaluate("__kit.state") == "error"
    assert "quiz question 1: answer must be the index of the right option, 0..1" in page.evaluate("__kit.errors")[0]

"""A state in a kit page's URL, in real Chromium: the page opens at that step, with that part open and those
controls set; a malformed or hostile state is ignored and never runs or breaks the page."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.support.kit import kit_state

pytestmark = pytest.mark.browser

TOGGLE = "document.querySelector('.kit-toggle input').checked"
PLAY_LABEL = "document.querySelector('.kit-play').getAttribute('aria-label')"


@pytest.fixture
def open_lesson(browser, kit_server):
    """Open a library lesson at `#fragment`; returns the page and the errors Chromium saw on it."""
    contexts = []

    def _open(slug: str, fragment: str = ""):
        context = browser.new_context(viewport={"width": 1000, "height": 700})
        contexts.append(context)
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        page.goto(f"{kit_server.url}/corpus/{slug}.html" + (f"#{fragment}" if fragment else ""))
        assert kit_state(page) == "ready", page.evaluate("window.__kit.errors")
        return page, problems

    yield _open
    for context in contexts:
        context.close()


def sliders(page) -> list[float]:
    return page.evaluate("window.__kit.sliders.slice(1).map((s) => Number(s.value))")  # the timeline left out


def test_a_state_in_the_url_shows_its_step_opens_its_part_and_sets_its_control(open_lesson):
    gas = quote("Gas dissolved in the magma")
    page, problems = open_lesson("volcanoes", f"step=6&part=Crater&control.{gas}=4")
    assert page.evaluate("window.__kit.step()") == {"index": 5, "count": 7}
    assert page.evaluate("document.querySelector('.kit-step-title').textContent") == "An explosion"
    assert page.evaluate("window.__kit.openPart") == "Crater"
    # The step sets silica to 70 and gas to 5; the state's gas, applied after it, wins.
    assert sliders(page) == [70, 4]
    assert page.evaluate("window.__kit.applied") == {"step": 6, "part": "Crater",
                                                     "controls": {"Gas dissolved in the magma": "4"}}
    assert problems == []


def test_a_chinese_lessons_state_names_its_chinese_part_and_control(open_lesson):
    page, problems = open_lesson("zh-volcanoes", f"part={quote('岩浆房')}&control.{quote('岩浆的二氧化硅含量')}=57")
    assert page.evaluate("window.__kit.openPart") == "岩浆房"
    assert sliders(page)[0] == 57
    assert problems == []


def test_a_toggle_switches_on_and_the_timeline_pauses_from_the_url(open_lesson):
    page, _ = open_lesson("heart")
    assert page.evaluate(TOGGLE) is False and page.evaluate(PLAY_LABEL) == "Pause"  # it autoplays
    valve, time = quote("Leaky valve (left side)"), quote("Time (slowed)")
    page, problems = open_lesson("heart", f"control.{valve}=on&control.{time}=pause&control.{quote('Heart rate')}=104")
    assert page.evaluate(TOGGLE) is True
    assert page.evaluate(PLAY_LABEL) == "Play"
    assert sliders(page) == [104]
    assert problems == []


def test_a_link_followed_within_the_page_applies_its_new_state(open_lesson):
    page, problems = open_lesson("volcanoes")
    page.evaluate("location.hash = 'step=4&part=Vent'")
    page.wait_for_timeout(200)
    assert page.evaluate("window.__kit.step().index") == 3
    assert page.evaluate("window.__kit.openPart") == "Vent"
    assert problems == []


HOSTILE = [
    "step=999&part=Nowhere&control.Nothing=3",  # no such step, part or control
    f"control.{quote('Silica in the magma')}=500&control.{quote('Gas dissolved in the magma')}=-2",  # out of range
    f"control.{quote('Silica in the magma')}=1e2&control.{quote('Gas dissolved in the magma')}=0x3",  # not decimals
    "step=-1&step=0&step=2.5&step=1e1",
    "part=" + quote("<img src=x onerror=alert(1)>") + "&control.Time=" + quote("alert(1)"),
    "part=" + quote("Crater\"><script>alert(1)</script>") + f"&control.{quote('Silica in the magma')}=" + quote("50;alert(1)"),
    "javascript:alert(1)",
    "%E0%A4%A&step=%&part=%ZZ",  # malformed percent-encoding
    "step=3&" + "x=" + "A" * 5000,  # longer than any state the app writes: ignored whole
    "control.__proto__=1&control.constructor=2&part=__proto__&part=toString",
]


@pytest.mark.parametrize("fragment", HOSTILE)
def test_a_malformed_or_hostile_state_is_ignored_and_the_page_still_works(open_lesson, fragment):
    page, problems = open_lesson("volcanoes", fragment)
    assert page.evaluate("window.__kit.errors") == []
    assert page.evaluate("window.__kit.step().index") == 0
    assert page.evaluate("window.__kit.openPart") is None
    assert sliders(page) == [50, 2]  # as the page starts
    assert page.evaluate("document.querySelectorAll('img, script:not([type])').length") == 0
    applied = page.evaluate("window.__kit.applied")
    assert applied is None or applied == {"step": None, "part": None, "controls": {}}
    # The page still answers the learner: a part opens, a slider moves.
    assert page.evaluate("window.__kit.open('Vent')") is True
    assert page.evaluate("window.__kit.openPart") == "Vent"
    assert problems == []

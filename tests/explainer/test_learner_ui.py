"""The learner UI in Chromium: ask, watch masked positions fill in, see the page in a sandbox, follow up."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from explainer.render_check.browser import launch_options

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("celery_workers")]

TIMEOUT_MS = 60_000
SHOTS = Path(__file__).resolve().parents[2] / "var"


@pytest.fixture
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(**launch_options())
        yield chromium
        chromium.close()


def test_a_learner_asks_watches_the_drafts_sees_the_page_and_follows_up(browser, live_server_url):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(live_server_url + "/")
    page.fill("#question", "[[slow]] Why is the sky blue?")
    page.click("#ask-button")

    # The live view shows the current block with positions still masked, and the rate.
    page.wait_for_selector("#current .mask", timeout=TIMEOUT_MS)
    expect(page.locator("#status")).to_contain_text("tokens/s", timeout=TIMEOUT_MS)
    expect(page.locator("#committed")).to_contain_text("<!doctype html>", timeout=TIMEOUT_MS)

    frame_element = page.locator("#page-frame")
    expect(frame_element).to_have_attribute("src", lambda_src := page_src_pattern(), timeout=TIMEOUT_MS)
    assert frame_element.get_attribute("sandbox") == "allow-scripts"
    page_frame = page.frame_locator("#page-frame")
    expect(page_frame.locator("h1")).to_have_text("Why is the sky blue?", timeout=TIMEOUT_MS)
    expect(page.locator("#versions li")).to_have_count(1)
    assert "/t/" in page.url  # the thread has its own address to come back to

    # Nothing spills sideways at phone width.
    page.screenshot(path=str(SHOTS / "learner-390.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.fill("#follow-question", "Now at sunset")
    page.click("#follow-form button")
    expect(page.locator("#versions li")).to_have_count(2, timeout=TIMEOUT_MS)
    expect(page.locator("#versions li").nth(1)).to_contain_text("v2 · Now at sunset")
    expect(page_frame.locator("h1")).to_have_text("Now at sunset", timeout=TIMEOUT_MS)
    assert lambda_src.search(frame_element.get_attribute("src"))

    # Reloading the thread's address shows both versions from the server.
    page.reload()
    expect(page.locator("#versions li")).to_have_count(2)
    expect(page_frame.locator("h1")).to_have_text("Now at sunset", timeout=TIMEOUT_MS)


def test_a_failed_generation_shows_the_reason_and_a_retry(browser, live_server_url):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(live_server_url + "/")
    page.fill("#question", "[[fail]] What is friction?")
    page.press("#question", "Enter")
    expect(page.locator("#problem")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("#problem-text")).to_contain_text("asked to fail")
    expect(page.locator("#retry-button")).to_be_visible()
    page.click("#retry-button")
    expect(page.locator("#problem")).to_be_visible(timeout=TIMEOUT_MS)  # the retry ran and failed the same way


def test_an_empty_question_is_refused_in_the_page(browser, live_server_url):
    page = browser.new_page()
    page.goto(live_server_url + "/")
    page.evaluate("document.getElementById('question').removeAttribute('required')")
    page.fill("#question", "   ")
    page.click("#ask-button")
    # Nothing is sent for whitespace: the question box stays, no live view appears.
    expect(page.locator("#ask-section")).to_be_visible()
    expect(page.locator("#live")).to_be_hidden()


def page_src_pattern():
    import re

    return re.compile(r"/pages/\d+/\?k=[^&]+$")

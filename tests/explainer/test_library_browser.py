"""/library/ in Chromium, on a desktop and a phone: browse, filter, search, open a lesson, ask a follow-up."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from model_worker.corpus import load_pages
from tests.support.accessibility import serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TIMEOUT_MS = 60_000
SHOTS = Path(__file__).resolve().parents[2] / "var"
TOPICS = 80


@pytest.fixture(scope="module", autouse=True)
def shelf_ready(live_server_url):
    """The live server's first /library/ builds the library's index (a minute on a busy 2-core machine): once."""
    with urllib.request.urlopen(live_server_url + "/library/?q=volcano", timeout=600) as response:
        assert response.status == 200


def wait_for_pictures(page) -> None:
    """Every card picture in view has drawn: a page's thumbnail or the placeholder, never a broken image."""
    page.wait_for_function("""() => [...document.querySelectorAll('.card img')]
        .filter((img) => img.getBoundingClientRect().top < innerHeight)
        .every((img) => img.complete && img.naturalWidth > 0)""", timeout=TIMEOUT_MS)


@pytest.mark.usefixtures("celery_workers")
def test_on_a_desktop_a_search_finds_a_lesson_that_opens_from_the_library_and_takes_a_follow_up(
    browser, live_server_url
):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(live_server_url + "/")
    page.click("#browse-library")  # the home page leads to it, as the header does
    expect(page.locator(".card")).to_have_count(TOPICS)
    expect(page.locator("#shelf-biology h2")).to_contain_text("Biology")
    wait_for_pictures(page)
    page.screenshot(path=str(SHOTS / "library-1280.png"))

    page.fill("#shelf-q", "Why do some volcanoes explode?")
    page.press("#shelf-q", "Enter")
    first = page.locator("#shelf-results .card").first
    expect(first.locator(".card-title")).to_have_text("How volcanoes erupt")
    first.locator(".card-open").click()

    expect(page).to_have_url(re.compile(r"/t/[0-9a-f-]+/$"))
    expect(page.locator("#versions li")).to_have_text(["v1 · How volcanoes erupt"])
    expect(page.locator("#page-topic")).to_contain_text("From the library")
    frame = page.frame_locator("#page-frame")
    expect(frame.locator("h1.kit-title")).to_have_text("How volcanoes erupt", timeout=TIMEOUT_MS)

    page.fill("#follow-question", "Can you show it at night?")
    page.click("#follow-form button")
    expect(page.locator("#versions li")).to_have_count(2, timeout=TIMEOUT_MS)
    expect(page.locator("#versions li").nth(1)).to_contain_text("v2 · Can you show it at night?")


def test_on_a_phone_the_shelf_fits_filters_and_opens_a_lesson_in_the_other_language(browser, live_server_url):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(live_server_url + "/library/")
    expect(page.locator(".card")).to_have_count(TOPICS)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing spills sideways
    two_a_row = page.evaluate("""() => {
        const [a, b] = document.querySelectorAll('.card');
        return a.getBoundingClientRect().top === b.getBoundingClientRect().top; }""")
    assert two_a_row
    wait_for_pictures(page)
    page.screenshot(path=str(SHOTS / "library-390.png"))
    assert serious_violations(page) == []  # the shelf, as axe-core judges a page

    in_grade_5 = {p.topic for p in load_pages() if int(p.grade.split("-")[0]) <= 5 <= int(p.grade.split("-")[1])}
    page.select_option("#shelf-grade", "5")
    page.click("#shelf-find button")
    expect(page.locator(".card")).to_have_count(len(in_grade_5))
    assert {c.get_attribute("data-topic") for c in page.locator(".card").all()} == in_grade_5

    page.goto(live_server_url + "/library/?q=volcano")
    page.locator('.card[data-topic="volcanoes"] .card-other').click()  # the lesson in Chinese, one tap away
    expect(page.locator("#versions li")).to_have_text(["v1 · 火山是怎样喷发的"])
    frame = page.frame_locator("#page-frame")
    expect(frame.locator("h1.kit-title")).to_have_text("火山是怎样喷发的", timeout=TIMEOUT_MS)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_chinese_browser_sees_the_shelf_in_chinese(browser, live_server_url):
    context = browser.new_context(locale="zh-CN", viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(live_server_url + "/")  # the home page's links to the library speak the interface's language
    expect(page.locator("#library-link")).to_have_text("资料库")
    expect(page.locator("#browse-library")).to_have_text("或者浏览资料库：按学科排列的每一节课")
    page.click("#library-link")
    expect(page.locator('.card[data-topic="volcanoes"] .card-title')).to_have_text("火山是怎样喷发的")
    expect(page.locator('.card[data-topic="volcanoes"] .card-other')).to_have_text("English")
    page.screenshot(path=str(SHOTS / "library-390-zh.png"))
    context.close()

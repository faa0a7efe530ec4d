"""The learner UI in Chromium while a page that failed its check is repaired."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("celery_workers")]

TIMEOUT_MS = 90_000  # three pages, each render-checked in Chromium


@pytest.fixture(scope="module")
def worker_env() -> dict:
    return {"REPAIR_ATTEMPTS": "2"}


def test_a_page_that_fails_its_check_shows_fixing_then_the_version_that_passes(browser, live_server_url):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(live_server_url + "/")
    page.fill("#question", "[[broken]] Why do planets orbit?")
    page.press("#question", "Enter")
    expect(page.locator("#status")).to_contain_text("Fixing", timeout=TIMEOUT_MS)
    # The test denoiser's page throws until the second repair: v1 and v2 fail their check, v3 passes.
    expect(page.locator("#versions li")).to_have_count(3, timeout=TIMEOUT_MS)
    expect(page.locator("#qa")).to_contain_text("Page checked in a browser", timeout=TIMEOUT_MS)
    expect(page.locator("#versions .failed-check")).to_have_count(2)
    assert page.locator("#page-frame").get_attribute("data-page") == \
        page.locator("#versions li").nth(2).locator("button").get_attribute("data-page")

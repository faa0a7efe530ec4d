"""A learner's open tab in Chromium: a page's frame that history restores after its signed link expired (Back
from another page, a tab the phone reloaded) still shows the page."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TIMEOUT_MS = 60_000
LINK_TTL_S = 60  # short_links_server_url's PAGE_LINK_TTL_S


def test_going_back_to_a_thread_after_its_page_link_expired_shows_the_page_again(browser, short_links_server_url,
                                                                                 monkeypatch):
    from explainer.models import Generation, PageVersion, Thread

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM calls run beside Playwright's loop
    url = short_links_server_url
    context = browser.new_context()
    view = context.new_page()
    view.goto(url + "/")
    session_key = next(c["value"] for c in context.cookies() if c["name"] == "sessionid")
    thread = Thread.objects.create(session_key=session_key)
    generation = Generation.objects.create(thread=thread, question="Why does a compass point north?", status="done")
    PageVersion.objects.create(thread=thread, generation=generation, version=1, html="<h1>Compass</h1>")

    view.goto(f"{url}/t/{thread.pk}/")
    expect(view.frame_locator("#page-frame").locator("h1")).to_have_text("Compass", timeout=TIMEOUT_MS)
    first_link = view.frames[1].url
    assert "?k=" in first_link
    view.click("header a[href='/join/']")  # the learner goes elsewhere in the same tab
    expect(view).to_have_url(f"{url}/join/")
    time.sleep(LINK_TTL_S + 2)  # the frame's signed link expires while the learner is elsewhere
    view.go_back()
    expect(view.frame_locator("#page-frame").locator("h1")).to_have_text("Compass", timeout=TIMEOUT_MS)
    assert view.frames[1].url != first_link  # a freshly signed one
    context.close()

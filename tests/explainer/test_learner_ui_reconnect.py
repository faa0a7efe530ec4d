"""The learner UI in Chromium when its connection drops mid-page: it reconnects by itself, resumes the
live view from the last event it saw, and the page arrives whole."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from model_worker.contract.pages import PageRequest
from tests.support.denoiser import page_for
from tests.support.proxy import CuttableProxy

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("celery_workers")]

TIMEOUT_MS = 60_000
QUESTION = "[[slow]] Why is the sky blue?"
PAGE_SRC = re.compile(r"/pages/\d+/")


@pytest.fixture
def proxy(patient_server_url):
    server = urlparse(patient_server_url)
    proxy = CuttableProxy(server.hostname, server.port)
    yield proxy
    proxy.close()


def test_a_dropped_connection_mid_page_reconnects_and_the_page_arrives_whole(browser, proxy):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sockets = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    page.goto(f"http://127.0.0.1:{proxy.port}/")
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    expect(page.locator("#committed")).to_contain_text("<!doctype html>", timeout=TIMEOUT_MS)
    written_before = len(page.locator("#committed").text_content())

    proxy.cut()  # every connection through the proxy closes, as when the network drops

    expect(page.locator("#page-frame")).to_have_attribute("src", PAGE_SRC, timeout=TIMEOUT_MS)
    expect(page.frame_locator("#page-frame").locator("h1")).to_have_text("Why is the sky blue?", timeout=TIMEOUT_MS)
    assert len(sockets) >= 2  # the view opened a new socket by itself
    committed = page.locator("#committed").text_content()
    assert len(committed) > written_before  # the rest of the page came over the new socket
    assert committed == page_for(PageRequest(question=QUESTION, topic="sky-blue"))
    assert page.locator("#problem").is_hidden()


def test_reloading_mid_page_resumes_the_live_view_and_the_page_arrives_whole(browser, patient_server_url):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{patient_server_url}/")
    page.fill("#question", QUESTION)
    page.click("#ask-button")
    expect(page.locator("#committed")).to_contain_text("<!doctype html>", timeout=TIMEOUT_MS)

    page.reload()  # the thread's own address now: /t/<thread>/, with the page half written

    assert re.search(r"/t/[0-9a-f-]+/$", page.url)
    expect(page.locator("#live")).to_be_visible()
    expect(page.locator("#live-question")).to_have_text(QUESTION)
    expect(page.locator("#page-frame")).to_have_attribute("src", PAGE_SRC, timeout=TIMEOUT_MS)
    expect(page.frame_locator("#page-frame").locator("h1")).to_have_text("Why is the sky blue?", timeout=TIMEOUT_MS)
    assert page.locator("#committed").text_content() == page_for(PageRequest(question=QUESTION, topic="sky-blue"))
    assert page.locator("#problem").is_hidden()

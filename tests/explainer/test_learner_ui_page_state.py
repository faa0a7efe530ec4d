"""The learner UI in Chromium: a follow-up the lesson itself answers becomes the next version at once, and the frame
opens the lesson in that state (the part's panel open, the step shown, the control moved)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from explainer.models import Generation, PageVersion, Thread
from model_worker.corpus import CORPUS_DIR

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TIMEOUT_MS = 60_000


def lesson_thread(session_key: str, slug: str) -> Thread:
    """A thread whose first version is the library's lesson, as opening it from the library leaves it."""
    html = (CORPUS_DIR / "pages" / f"{slug}.html").read_text(encoding="utf-8")
    thread = Thread.objects.create(session_key=session_key, topic_slug=slug)
    generation = Generation.objects.create(thread=thread, question=slug, lang="zh" if slug.startswith("zh") else "en",
                                           status=Generation.Status.DONE, stats={"source": "library"})
    PageVersion.objects.create(thread=thread, generation=generation, version=1, html=html)
    return thread


def open_lesson(browser, live_server_url, slug: str):
    """A learner's browser on a thread holding `slug`'s lesson."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(live_server_url + "/")
    session = next(c["value"] for c in page.context.cookies() if c["name"] == "sessionid")
    with ThreadPoolExecutor(1) as pool:  # the ORM, from another thread than Playwright's loop
        thread = pool.submit(lesson_thread, session, slug).result()
    # The server's first thread view builds the library index (over a minute on a busy 2-core machine).
    page.goto(f"{live_server_url}/t/{thread.pk}/", wait_until="domcontentloaded", timeout=4 * TIMEOUT_MS)
    frame = page.frame_locator("#page-frame")
    expect(frame.locator("h1.kit-title")).to_be_visible(timeout=TIMEOUT_MS)
    return page, frame


def follow_up(page, question: str, versions: int) -> None:
    page.fill("#follow-question", question)
    page.click("#follow-form button")
    expect(page.locator("#versions li")).to_have_count(versions, timeout=TIMEOUT_MS)
    expect(page.locator("#versions li").nth(versions - 1)).to_contain_text(f"v{versions} · {question}")


def test_an_english_lesson_opens_the_named_part_then_the_step_then_moves_the_control(browser, live_server_url):
    page, frame = open_lesson(browser, live_server_url, "volcanoes")

    follow_up(page, "Tell me about the magma chamber", 2)
    expect(frame.locator(".kit-panel-title")).to_have_text("Magma chamber", timeout=TIMEOUT_MS)
    expect(page.locator("#qa")).to_contain_text("this page, shown for your question")

    follow_up(page, "How does a shield volcano form?", 3)
    expect(frame.locator(".kit-step-title")).to_have_text("A shield volcano", timeout=TIMEOUT_MS)
    expect(frame.locator(".kit-panel")).to_be_hidden()

    follow_up(page, "More silica please", 4)
    silica = frame.locator(".kit-range").nth(1)  # after the timeline
    expect(silica).to_have_value("57", timeout=TIMEOUT_MS)
    expect(frame.locator(".kit-step-title")).to_have_text("A shield volcano")  # the step stays

    # An earlier version opens in its own state again.
    page.locator("#versions .version").nth(1).click()
    expect(frame.locator(".kit-panel-title")).to_have_text("Magma chamber", timeout=TIMEOUT_MS)


def test_a_chinese_lesson_opens_the_named_part_then_the_step_then_moves_the_control(browser, live_server_url):
    page, frame = open_lesson(browser, live_server_url, "zh-heart")
    follow_up(page, "讲讲瓣膜", 2)
    expect(frame.locator(".kit-panel-title")).to_have_text("瓣膜", timeout=TIMEOUT_MS)
    expect(page.locator("#qa")).to_contain_text("还是这一页")

    follow_up(page, "运动时心脏会怎样？", 3)
    expect(frame.locator(".kit-step-title")).to_have_text("运动时", timeout=TIMEOUT_MS)

    follow_up(page, "心率慢一些", 4)
    # Slower than the 150 the exercise step set: a quarter of 50..180 lower.
    expect(frame.locator(".kit-range").nth(1)).to_have_value("118", timeout=TIMEOUT_MS)
    expect(frame.locator(".kit-step-title")).to_have_text("运动时")

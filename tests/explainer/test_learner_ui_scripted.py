"""The learner UI in Chromium with a scripted socket in place of the server: each test sends the events of one
situation (docs/protocol.md) and checks what the learner sees, types and reaches with the keyboard."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.sockets import ScriptedSocket

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

THREAD = "5b7a1e52-4c1d-4a8e-9f0b-2d6c3e8a9b10"
G1, G2, G3 = (f"c41d0e6a-0000-4000-8000-00000000000{n}" for n in (1, 2, 3))
QUESTION = "Why do planets orbit?"


@pytest.fixture
def learner(browser, live_server_url):
    """A new learner's page whose socket the test scripts: (the page, its socket)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    socket = ScriptedSocket(page)
    page.goto(live_server_url + "/")
    return page, socket


def ask(page, socket, question: str = QUESTION, box: str = "#question") -> dict:
    """Type `question` and press Enter, as a learner does; returns the `ask` the page sent."""
    page.fill(box, question)
    page.press(box, "Enter")
    return socket.wait_for("ask")


def written(socket, generation: str, page: int, version: int):
    """Generation `generation` queues and writes page `page`, version `version` of the thread."""
    socket.send("queued", generation, thread=THREAD, position=0)
    socket.send("done", generation, thread=THREAD, page=page, page_url=f"/pages/{page}/?k=x", version=version,
                stats={"tokens": 120, "seconds": 1.5, "tokens_per_s": 80})


def failed_check(socket, generation: str, page: int, version: int, repair: str, attempt: int):
    """Page `page` fails its render check and generation `repair` writes it again (`fixing`, then `qa`)."""
    socket.send("fixing", generation, thread=THREAD, page=page, version=version, attempt=attempt, attempts=2,
                errors=["ReferenceError: notDefinedAnywhere is not defined"], repair=repair)
    socket.send("qa", generation, page=page, version=version, check=page, passed=False, status="failed",
                summary="the page threw: ReferenceError", thumbnail_url=None, repair=repair,
                checks=[{"name": "no_errors", "passed": False, "detail": "ReferenceError", "required": True}])


def test_a_last_repair_that_fails_leaves_the_page_as_a_reload_shows_it(learner):
    page, socket = learner
    ask(page, socket)
    written(socket, G1, page=1, version=1)
    failed_check(socket, G1, page=1, version=1, repair=G2, attempt=1)
    written(socket, G2, page=2, version=2)
    failed_check(socket, G2, page=2, version=2, repair=G3, attempt=2)
    socket.send("queued", G3, thread=THREAD, position=0)
    socket.send("error", G3, code="empty_page", message="The model wrote no complete page: no </html>.")

    expect(page.locator("#problem-text")).to_contain_text("no complete page")
    # The failed v2 stays, warned about, with its check's verdict instead of "checking…".
    expect(page.locator("#page-frame")).to_have_attribute("data-page", "2")
    expect(page.locator("#page-warning")).to_be_visible()
    expect(page.locator("#qa")).to_have_text("⚠ Page check: the page threw: ReferenceError")
    # Both versions are marked as a reload marks them, and the earlier one keeps its warning when opened.
    expect(page.locator("#versions .version")).to_have_text([re.compile(r"^⚠ v1 · "), re.compile(r"^⚠ v2 · ")])
    page.locator("#versions .version").first.click()
    expect(page.locator("#page-frame")).to_have_attribute("data-page", "1")
    expect(page.locator("#page-warning")).to_be_visible()


def test_stop_pressed_while_queued_keeps_saying_so_as_the_queue_moves(learner):
    page, socket = learner
    ask(page, socket)
    socket.send("queued", G1, thread=THREAD, position=2)
    expect(page.locator("#status")).to_have_text("Waiting for the model: 2 ahead of you…")
    page.click("#stop-button")
    assert socket.wait_for("cancel")["generation"] == G1
    socket.send("queued", G1, thread=THREAD, position=1)
    expect(page.locator("#status")).to_have_text("Stopping after this block…")
    # A worker took it before the stop reached it: its progress does not hide the stop either.
    socket.send("stats", G1, blocks=1, tokens=32, seconds=0.5, tokens_per_s=64.0)
    expect(page.locator("#status")).to_have_text("Stopping after this block…")


def test_a_whitespace_question_says_to_type_one_and_sends_nothing(learner):
    page, socket = learner
    page.fill("#question", "   ")
    page.press("#question", "Enter")
    expect(page.locator("#problem-text")).to_have_text("Type a question first.")
    expect(page.locator("#retry-button")).to_be_hidden()
    expect(page.locator("#ask-section")).to_be_visible()
    assert not [m for m in socket.received if m["type"] == "ask"]


def test_a_paste_past_the_length_limit_says_it_was_cut(learner):
    page, _socket = learner
    expect(page.locator("#question-limit")).to_be_hidden()
    page.focus("#question")
    page.keyboard.insert_text("Why " * 150)  # 600 characters, pasted at once
    assert len(page.input_value("#question")) == 500
    expect(page.locator("#question-limit")).to_have_text("Questions can be at most 500 characters: anything longer is cut.")
    page.keyboard.press("Backspace")
    expect(page.locator("#question-limit")).to_be_hidden()


def test_a_follow_up_that_changes_nothing_keeps_what_the_learner_typed(learner):
    page, socket = learner
    ask(page, socket)
    written(socket, G1, page=1, version=1)
    sent = ask(page, socket, "Now at sunset", box="#follow-question")
    assert sent["thread"] == THREAD
    socket.send("queued", G2, thread=THREAD, position=0)
    socket.send("done", G2, thread=THREAD, page=1, page_url="/pages/1/?k=x", version=1, unchanged=True,
                stats={"unchanged": True})
    expect(page.locator("#problem-text")).to_contain_text("the same page again")
    expect(page.locator("#follow-question")).to_have_value("Now at sunset")


def test_after_enter_the_focus_follows_the_live_view_to_the_page(learner):
    page, socket = learner
    ask(page, socket)
    expect(page.locator("#status")).to_be_focused()  # not <body>: the ask form is gone
    written(socket, G1, page=1, version=1)
    expect(page.locator("#page-question")).to_be_focused()
    page.keyboard.press("Tab")
    assert page.evaluate("document.getElementById('result').contains(document.activeElement)")


def test_after_enter_a_refusal_takes_the_focus(learner):
    page, socket = learner
    ask(page, socket)
    socket.send("queued", G1, thread=THREAD, position=0)
    socket.send("error", G1, code="generation_failed", message="The model failed.")
    expect(page.locator("#problem")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#retry-button")).to_be_focused()


# `rate_limited` answers the `ask` itself; `empty_page` ends a generation, and a model samples anew next time.
@pytest.mark.parametrize(("code", "generation", "retry"), [("rate_limited", None, False), ("empty_page", G1, True)])
def test_try_again_is_offered_only_where_asking_again_can_work(learner, code, generation, retry):
    page, socket = learner
    ask(page, socket)
    if generation:
        socket.send("queued", generation, thread=THREAD, position=0)
    socket.send("error", generation, code=code, message="Something went wrong.", request="ask")
    expect(page.locator("#problem")).to_be_visible()
    assert page.locator("#retry-button").is_visible() == retry


def test_a_chinese_interface_says_its_header_and_labels_in_chinese(browser, live_server_url):
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    page.goto(live_server_url + "/")
    expect(page.locator("header.top nav a").first).to_have_text("加入班级")
    expect(page.locator("label[for=question]")).to_have_text("你的问题")
    assert page.evaluate("document.documentElement.lang") == "zh"
    # The header's switch changes it, and the choice outlasts the browser's language on the next page.
    page.select_option("#interface-language", "en")
    expect(page.locator("label[for=question]")).to_have_text("Your question")
    page.goto(live_server_url + "/join/")
    expect(page.locator("h1")).to_have_text("Join your class")
    assert page.evaluate("document.documentElement.lang") == "en"
    context.close()


def test_a_chinese_question_in_an_english_interface_is_marked_chinese_for_screen_readers(learner):
    page, socket = learner
    assert page.evaluate("document.documentElement.lang") == "en"
    ask(page, socket, "为什么行星绕着太阳转？")
    socket.send("queued", G1, thread=THREAD, position=1)
    expect(page.locator("#status")).to_have_text(re.compile("排队"))
    assert page.evaluate("document.getElementById('status').closest('[lang]').lang") == "zh"


def a_written_thread(browser, live_server_url, monkeypatch):
    """A new browser whose one thread has one page written: (its context, its tab, the page's row)."""
    from explainer.models import Generation, PageVersion, Thread

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM calls below run beside Playwright's loop
    context = browser.new_context()
    page = context.new_page()
    page.goto(live_server_url + "/")
    session_key = next(c["value"] for c in context.cookies() if c["name"] == "sessionid")
    thread = Thread.objects.create(session_key=session_key, topic_slug="sky-blue")
    generation = Generation.objects.create(thread=thread, question="Why is the sky blue?", status="done")
    return context, page, PageVersion.objects.create(thread=thread, generation=generation, version=1,
                                                     html="<h1>Sky</h1>")


def test_a_reloaded_thread_says_again_what_its_page_explains_and_that_it_passed(browser, live_server_url,
                                                                                monkeypatch):
    from explainer.models import RenderCheck
    from explainer.selectors.library import library_index

    context, page, shown = a_written_thread(browser, live_server_url, monkeypatch)
    thread = shown.thread
    RenderCheck.objects.create(page=shown, status=RenderCheck.Status.PASSED)
    page.goto(f"{live_server_url}/t/{thread.pk}/")
    title = library_index().by_slug["sky-blue"].title
    expect(page.locator("#page-topic")).to_contain_text(f"Explaining: {title}")
    expect(page.locator("#qa")).to_have_text("✓ Page checked in a browser")
    context.close()


def test_a_thread_reloaded_before_its_check_answered_shows_the_verdict_when_it_comes(browser, live_server_url,
                                                                                    monkeypatch):
    context, page, shown = a_written_thread(browser, live_server_url, monkeypatch)
    thread, generation = shown.thread, shown.generation
    socket = ScriptedSocket(page)
    page.goto(f"{live_server_url}/t/{thread.pk}/")  # between `done` and `qa`: the check has not answered
    expect(page.locator("#qa")).to_have_text("Checking the page in a browser…")
    resume = socket.wait_for("resume")
    assert (resume["generation"], resume["after"]) == (str(generation.pk), 0)
    # The stream is replayed from its start: the page is there already, and only the verdict is news.
    socket.send("queued", str(generation.pk), thread=str(thread.pk), position=0)
    socket.send("done", str(generation.pk), thread=str(thread.pk), page=shown.pk, page_url=f"/pages/{shown.pk}/",
                version=1, stats={"tokens": 120, "seconds": 1.5, "tokens_per_s": 80})
    expect(page.locator("#qa")).to_have_text("Checking the page in a browser…")
    socket.send("qa", str(generation.pk), page=shown.pk, version=1, check=1, passed=True, status="passed",
                summary="", thumbnail_url=None, repair=None, checks=[])
    expect(page.locator("#qa")).to_have_text("✓ Page checked in a browser")
    expect(page.locator("#versions .version")).to_have_count(1)
    context.close()


@pytest.mark.parametrize(("locale", "seeds", "visible"), [
    ("en-US", ["Why do magnets stick?", "磁铁为什么能吸铁？"], ["Why do magnets stick?"]),
    ("zh-CN", ["Why do magnets stick?", "磁铁为什么能吸铁？"], ["磁铁为什么能吸铁？"]),
    ("zh-CN", ["Why do magnets stick?"], ["Why do magnets stick?"]),  # none in Chinese: all of them
])
def test_a_class_s_suggestions_are_those_in_the_interface_s_language(browser, live_server_url, monkeypatch,
                                                                     locale, seeds, visible):
    from django.contrib.auth import get_user_model

    from explainer.models import Classroom, Topic

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM calls below run beside Playwright's loop
    teacher = get_user_model().objects.create_user("t", password="pw-123456789")
    classroom = Classroom.objects.create(name="7B", teacher=teacher)
    Topic.objects.create(classroom=classroom, title="Magnetism", seed_questions=seeds)
    context = browser.new_context(locale=locale)
    page = context.new_page()
    page.goto(live_server_url + "/join/")
    page.fill("#join [name=join_code]", classroom.join_code)
    page.fill("#join [name=display_name]", "Mia")
    page.click("#join button")
    page.goto(live_server_url + "/")
    expect(page.locator("#suggestions .chip:visible")).to_have_text(visible)
    context.close()


def test_a_page_written_for_a_question_outside_the_library_is_headed_by_the_question_not_its_grounding(learner):
    page, socket = learner
    ask(page, socket, "What causes the northern lights?")
    socket.send("queued", G1, thread=THREAD, position=0)
    socket.send("topic", G1, slug="seasons-axial-tilt", title="Why Earth has seasons", lang="en", score=0.53,
                nearest=[{"slug": "seasons-axial-tilt", "title": "Why Earth has seasons"}], source="model",
                answers="What causes the northern lights?",
                related={"slug": "seasons-axial-tilt", "title": "Why Earth has seasons"})
    line = page.locator("#live-topic")
    expect(line).to_contain_text("Explaining: What causes the northern lights?")
    expect(line.locator(".related")).to_have_text("Related lesson: Why Earth has seasons")
    expect(line).not_to_contain_text("Explaining: Why Earth has seasons")

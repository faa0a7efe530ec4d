"""The learner UI in Chromium: ask, watch masked positions fill in, see the page in a sandbox, follow up."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.library import nearest_page
from tests.support.sockets import SOCKET_SPY

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("celery_workers")]

TIMEOUT_MS = 60_000
SHOTS = Path(__file__).resolve().parents[2] / "var"


def test_a_learner_asks_watches_the_drafts_sees_the_page_and_follows_up(browser, live_server_url):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(live_server_url + "/")
    page.fill("#question", "[[slow]] Why is the sky blue?")
    page.click("#ask-button")

    # The live view says which library page is being written, then shows the current block with
    # positions still masked, and the rate.
    expect(page.locator("#live-topic")).to_have_text("Explaining: Why the sky is blue", timeout=TIMEOUT_MS)
    page.wait_for_selector("#current .mask", timeout=TIMEOUT_MS)
    expect(page.locator("#status")).to_contain_text("tokens/s", timeout=TIMEOUT_MS)
    expect(page.locator("#committed")).to_contain_text("<!doctype html>", timeout=TIMEOUT_MS)

    frame_element = page.locator("#page-frame")
    expect(frame_element).to_have_attribute("src", lambda_src := page_src_pattern(), timeout=TIMEOUT_MS)
    assert frame_element.get_attribute("sandbox") == "allow-scripts"
    page_frame = page.frame_locator("#page-frame")
    expect(page_frame.locator("h1")).to_have_text("Why is the sky blue?", timeout=TIMEOUT_MS)
    expect(page.locator("#versions li")).to_have_count(1)
    # The page can be saved as one file that works offline, by the same lasting link.
    download = page.locator("#page-download")
    expect(download).to_be_visible()
    assert re.search(r"/pages/\d+/open/\?download=1$", download.get_attribute("href"))
    saved = page.request.get(download.get_attribute("href"))  # with this browser's session
    # ... which leads to the page's freshly signed download (the test model's page is not written against
    # the kit, so that answers that it cannot be made one file).
    assert re.search(r"/pages/\d+/download/\?k=", saved.url) and saved.status in (200, 422)
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
    page.fill("#question", "[[fail]] What affects the period of a pendulum?")
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

    # The app's lasting link to the page, which sends the frame on to a freshly signed one.
    return re.compile(r"/pages/\d+/open/$")


def test_an_unknown_topic_offers_the_nearest_topics_and_a_click_asks_one(browser, live_server_url):
    nearest_one = nearest_page("How does a refrigerator keep food cold?").title
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(live_server_url + "/")
    # The examples are library questions in the language questions are asked in.
    page.select_option("#lang", "zh")
    expect(page.locator('#suggestions .chip[data-lang="zh"]').first).to_be_visible()
    expect(page.locator('#suggestions .chip[data-lang="en"]').first).to_be_hidden()
    # The page's own chrome follows the interface's language, the header's switch.
    page.select_option("#interface-language", "zh-hans")
    expect(page.locator("#ask-button")).to_have_text("讲解")
    assert page.evaluate("document.documentElement.lang") == "zh"
    expect(page.locator('#suggestions .chip[data-lang="en"]').first).to_be_hidden()
    page.select_option("#interface-language", "en")
    expect(page.locator("#ask-button")).to_have_text("Explain it")
    # Far from every topic: the library has no page on it.
    page.fill("#question", "How do I fix a flat bicycle tyre?")
    page.press("#question", "Enter")
    expect(page.locator("#problem-text")).to_contain_text("no page", timeout=TIMEOUT_MS)
    expect(page.locator("#nearest-label")).to_have_text("Topics the library has that come close:")
    # Near a topic but below the threshold: the router says it is unsure and asks.
    page.fill("#question", "How does a refrigerator keep food cold?")
    page.press("#question", "Enter")
    expect(page.locator("#problem-text")).to_contain_text("not sure the library has a page", timeout=TIMEOUT_MS)
    expect(page.locator("#retry-button")).to_be_hidden()
    nearest = page.locator("#nearest-topics .chip")
    expect(nearest.first).to_have_text(nearest_one)
    assert nearest.count() <= 3

    expect(page.locator("#nearest-label")).to_have_text("Is your question about one of these?")

    nearest.first.click()
    expect(page.locator("#live-topic")).to_have_text(f"Explaining: {nearest_one}", timeout=TIMEOUT_MS)


def ask_on_a_phone(browser, live_server_url, question: str):
    """A new learner's page on a phone-sized screen, with `question` asked."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(live_server_url + "/")
    page.fill("#question", question)
    page.press("#question", "Enter")
    return page


def test_a_chinese_question_is_refused_with_its_nearest_topics_in_chinese(browser, live_server_url):
    page = ask_on_a_phone(browser, live_server_url, "冰箱是怎样让食物保持低温的？")  # near a topic: unsure
    expect(page.locator("#problem-text")).to_contain_text("我不确定资料库里", timeout=TIMEOUT_MS)
    expect(page.locator("#nearest-label")).to_have_text("你问的是不是下面这些主题？")
    expect(page.locator("#nearest-label")).to_have_attribute("lang", "zh")
    page.fill("#question", "为什么猫会打呼噜？")  # near nothing the library has
    page.press("#question", "Enter")
    expect(page.locator("#problem-text")).to_contain_text("资料库里还没有", timeout=TIMEOUT_MS)
    expect(page.locator("#nearest-label")).to_have_text("资料库里有这些相近的主题：")


def test_a_chinese_question_says_what_is_being_explained_in_chinese(browser, live_server_url):
    page = ask_on_a_phone(browser, live_server_url, "彩虹是怎么形成的？")
    expect(page.locator("#live-topic")).to_contain_text("正在讲解：彩虹和光的色散", timeout=TIMEOUT_MS)
    expect(page.locator("#qa")).to_contain_text("第 1 版", timeout=TIMEOUT_MS)  # the page's line, in Chinese too


BEES_ZH = """<!doctype html><html lang="zh-CN"><head><title>蜜蜂怎样酿蜜</title></head><body>
<script type="module">import { start } from "kit";
const app = start({ lang: "zh", title: "蜜蜂怎样酿蜜", intro: "工蜂把花蜜带回蜂巢，酿成蜂蜜。" });
app.part(app.group(), { title: "花蜜", text: "工蜂用蜜囊把花蜜带回蜂巢。" });
</script></body></html>"""


@pytest.fixture
def class_with_a_chinese_only_page(transactional_db):
    """A class whose teacher added a page in Chinese only (the corpus's own topics gain both languages)."""
    from django.contrib.auth import get_user_model

    from explainer.models import Classroom, LibraryPage

    teacher = get_user_model().objects.create_user("t", password="pw-123456789")
    classroom = Classroom.objects.create(name="7B", teacher=teacher)
    LibraryPage.objects.create(classroom=classroom, slug="zh-honey-bees", title="蜜蜂怎样酿蜜", lang="zh",
                               topic="honey-bees", questions=["How do bees make honey?", "蜜蜂是怎样酿蜜的？"],
                               html=BEES_ZH, source=LibraryPage.Source.PASTE)
    return classroom


def test_a_topic_only_in_chinese_says_so_plainly(class_with_a_chinese_only_page, browser, live_server_url):
    # (the class is made first: Django refuses database calls once Playwright runs its loop here)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(live_server_url + "/join/")
    page.fill("#join [name=join_code]", class_with_a_chinese_only_page.join_code)
    page.fill("#join [name=display_name]", "Mia")
    page.click("#join button")
    page.goto(live_server_url + "/")
    page.select_option("#lang", "en")
    page.fill("#question", "How do bees make honey?")
    page.press("#question", "Enter")
    expect(page.locator("#live-topic")).to_contain_text("Explaining: 蜜蜂怎样酿蜜", timeout=TIMEOUT_MS)
    expect(page.locator("#live-topic")).to_contain_text("available in 中文 only")


def test_a_chinese_question_s_problem_is_said_in_chinese(browser, live_server_url):
    page = ask_on_a_phone(browser, live_server_url, "[[fail]] 单摆的周期和什么有关？")
    expect(page.locator("#problem-text")).to_have_text("这一页没能写出来。", timeout=TIMEOUT_MS)
    expect(page.locator("#retry-button")).to_be_visible()


@pytest.mark.parametrize("in_a_class", [True, False], ids=["class-learner", "anonymous"])
def test_a_page_the_teacher_hides_then_shows_leaves_and_rejoins_the_open_view(browser, live_server_url, monkeypatch,
                                                                            in_a_class):
    from django.contrib.auth import get_user_model

    from explainer.models import Classroom, Generation, Learner, PageVersion, Thread
    from explainer.services.review import page_set_hidden

    # Playwright's sync API runs an event loop in this thread; the ORM calls below are still plain sync calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    context = browser.new_context()
    context.add_init_script(SOCKET_SPY)
    view = context.new_page()
    learner = classroom = None
    if in_a_class:
        teacher = get_user_model().objects.create_user("t", password="pw-123456789")
        classroom = Classroom.objects.create(name="7B", teacher=teacher)
        view.goto(live_server_url + "/join/")
        view.fill("#join [name=join_code]", classroom.join_code)
        view.fill("#join [name=display_name]", "Mia")
        view.click("#join button")
        learner = Learner.objects.get(display_name="Mia")
    else:  # a browser in no class hears of its thread only by watching it
        view.goto(live_server_url + "/")
    session_key = next(c["value"] for c in context.cookies() if c["name"] == "sessionid")
    thread = Thread.objects.create(session_key=session_key, learner=learner, classroom=classroom)
    generation = Generation.objects.create(thread=thread, learner=learner, classroom=classroom,
                                           question="Why does a compass point north?", status="done")
    page = PageVersion.objects.create(thread=thread, generation=generation, version=1, html="<h1>Compass</h1>")
    view.goto(f"{live_server_url}/t/{thread.pk}/")
    view.wait_for_function(f"() => window.socketEvents.some(e => e.type === 'watching' && e.thread === '{thread.pk}')")
    frame = view.frame_locator("#page-frame")
    expect(frame.locator("h1")).to_have_text("Compass", timeout=TIMEOUT_MS)

    def teacher_sets(hidden: bool):  # from another thread: the broadcast cannot run inside Playwright's loop
        with ThreadPoolExecutor(1) as pool:
            pool.submit(page_set_hidden, page=page, hidden=hidden).result()

    download = view.locator("#page-download")
    expect(download).to_be_visible()

    teacher_sets(hidden=True)
    expect(view.locator("#versions li")).to_have_count(0, timeout=TIMEOUT_MS)
    expect(view.locator("#page-question")).to_have_text("Your teacher hid this page.")
    expect(download).to_be_hidden()  # its link would only answer 404 now
    assert download.get_attribute("href") is None

    teacher_sets(hidden=False)
    expect(view.locator("#versions li")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(view.locator("#versions li")).to_have_text("v1 · Why does a compass point north?")  # as listed before
    expect(view.locator("#page-question")).to_have_text("Why does a compass point north?")
    expect(frame.locator("h1")).to_have_text("Compass", timeout=TIMEOUT_MS)
    expect(download).to_be_visible()


def test_a_thread_opened_while_its_page_was_hidden_shows_the_page_when_the_teacher_shows_it(browser, live_server_url,
                                                                                        monkeypatch):
    from explainer.models import Generation, PageVersion, Thread
    from explainer.services.review import page_set_hidden

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    context = browser.new_context()
    context.add_init_script(SOCKET_SPY)
    view = context.new_page()
    view.goto(live_server_url + "/")
    session_key = next(c["value"] for c in context.cookies() if c["name"] == "sessionid")
    thread = Thread.objects.create(session_key=session_key)
    generation = Generation.objects.create(thread=thread, question="Why does a compass point north?", status="done")
    page = PageVersion.objects.create(thread=thread, generation=generation, version=1, html="<h1>Compass</h1>",
                                      hidden=True)
    view.goto(f"{live_server_url}/t/{thread.pk}/")  # every version hidden: the view says so, and waits
    expect(view.locator("#thread-hidden")).to_have_text("Your teacher hid this page.")
    view.wait_for_function(f"() => window.socketEvents.some(e => e.type === 'watching' && e.thread === '{thread.pk}')")

    with ThreadPoolExecutor(1) as pool:  # "Show to learners", from another thread than Playwright's loop
        pool.submit(page_set_hidden, page=page, hidden=False).result()
    expect(view.locator("#versions li")).to_have_text(["v1 · Why does a compass point north?"], timeout=TIMEOUT_MS)
    expect(view.frame_locator("#page-frame").locator("h1")).to_have_text("Compass", timeout=TIMEOUT_MS)
    # The page takes the place of the note that it was hidden: nothing says it is hidden any more.
    expect(view.locator("#thread-hidden")).to_be_hidden()
    expect(view.locator("#ask-section")).to_be_hidden()
    expect(view.locator("#result")).to_be_visible()
    context.close()


def test_the_learner_socket_says_a_message_is_too_long_instead_of_losing_its_connection(browser, live_server_url):
    page = browser.new_page()
    page.goto(live_server_url + "/")
    outcome = page.evaluate("""async () => {
        const { Socket } = await import('/static/app/socket.js');
        const errors = [];
        const socket = new Socket(`ws://${location.host}/ws/explain/`,
          { onEvent: (e) => { if (e.type === 'error') errors.push(e.code); }, onStatus: () => {} });
        socket.open();
        await new Promise((done) => socket.ws.addEventListener('open', done));
        let closed = false;
        socket.ws.addEventListener('close', () => { closed = true; });
        socket.send({ type: 'ask', question: 'Why? '.repeat(400000) });  // 2 MB: Daphne would drop the socket
        await new Promise((done) => setTimeout(done, 1000));
        return { errors, closed };
    }""")
    assert outcome == {"errors": ["message_too_big"], "closed": False}

"""Over the learner's socket: a follow-up the page itself answers opens the page in that state as the thread's next
version at once, with no model; one the page cannot answer goes to the model, or is refused with the library's
nearest topics when the model cannot change the lesson; a hidden page answers no follow-up."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from channels.db import database_sync_to_async

from explainer.models import Generation, PageVersion, Thread
from model_worker.corpus import CORPUS_DIR
from tests.support.queues import gpu_waiting
from tests.support.sockets import receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

# Three lessons in both languages: a follow-up naming a part, one naming what a step is about, one naming a
# control with a direction (the label, and +1 up or -1 down from where the step leaves it), and one unrelated.
LESSONS = {
    "volcanoes": ("Tell me about the magma chamber", "Magma chamber", "How does a shield volcano form?", 4,
                  "More silica please", "Silica in the magma", 50, +1, "How do bees make honey?"),
    "zh-volcanoes": ("岩浆房是什么？", "岩浆房", "盾状火山是怎么形成的？", 4,
                     "二氧化硅含量调高一点", "岩浆的二氧化硅含量", 50, +1, "蜜蜂怎么酿蜜？"),
    "heart": ("Tell me about the valves", "Valves", "How does blood go to the lungs?", 5,
              "Slower heart rate please", "Heart rate", 72, -1, "What is a black hole?"),
    # The exercise step sets the rate to 150: slower is from there.
    "zh-heart": ("讲讲瓣膜", "瓣膜", "运动时心脏会怎样？", 7, "心率慢一些", "心率", 150, -1, "黑洞是什么？"),
    "circuits": ("What does the battery do?", "Battery", "What happens if I take out a bulb?", 4,
                 "Make the battery lower", "Battery", 6, -1, "How do magnets work?"),
    "zh-circuits": ("讲讲开关", "开关", "取下一个灯泡会怎样？", 4, "电源电压调高一点", "电源电压", 6, +1, "磁铁是怎么工作的？"),
}


@pytest.fixture(scope="module", autouse=True)
def library_built():
    """Build the library index before the first ask, so a few-second wait measures the socket (nothing learned:
    the index a first ask finds cached)."""
    from explainer.selectors.library import index_for, library_pages

    index_for(library_pages())


@database_sync_to_async
def lesson_thread(session_key: str, slug: str, *, hidden: bool = False) -> Thread:
    """A thread whose first version is the library's lesson, as opening it from the library leaves it."""
    html = (CORPUS_DIR / "pages" / f"{slug}.html").read_text(encoding="utf-8")
    thread = Thread.objects.create(session_key=session_key, topic_slug=slug)
    generation = Generation.objects.create(thread=thread, question=slug, lang="zh" if slug.startswith("zh") else "en",
                                           status=Generation.Status.DONE, stats={"source": "library"})
    PageVersion.objects.create(thread=thread, generation=generation, version=1, html=html, hidden=hidden)
    return thread


@database_sync_to_async
def versions(thread: Thread) -> list[tuple[int, str, bool]]:
    return [(p.version, p.state, p.html == p.thread.pages.get(version=1).html) for p in thread.pages.order_by("version")]


async def follow_up(ws, thread: Thread, question: str) -> list[dict]:
    """A follow-up's events up to its `done` (its `qa` is the render check's, which no worker runs here)."""
    await ws.send_json_to({"type": "ask", "question": question, "thread": str(thread.pk)})
    seen: list[dict] = []
    await receive_until(ws, {"done", "error"}, seen, timeout=20)
    return seen


@pytest.mark.parametrize("slug", LESSONS)
async def test_a_follow_up_opens_a_part_shows_a_step_and_moves_a_control_as_new_versions_without_the_model(
    connect, session_key, redis_db, slug
):
    part_q, part, step_q, step, control_q, label, start, way, unrelated = LESSONS[slug]
    thread = await lesson_thread(session_key, slug)
    ws = await connect()

    queued, topic, done = await follow_up(ws, thread, part_q)
    assert (queued["type"], queued["position"], topic["type"], topic["source"]) == ("queued", 0, "topic", "page")
    assert (done["type"], done["version"], done["state"]) == ("done", 2, f"part={quote(part)}")
    assert done["page_url"].endswith(f"#part={quote(part)}") and done["stats"]["source"] == "page"

    *_, done = await follow_up(ws, thread, step_q)
    assert (done["version"], done["state"]) == (3, f"step={step}")  # a step sets its own scene: the part goes

    *_, done = await follow_up(ws, thread, control_q)
    prefix = f"step={step}&control.{quote(label)}="
    assert done["version"] == 4 and done["state"].startswith(prefix)  # the step stays, the control moves
    moved = float(done["state"].removeprefix(prefix))
    assert (moved - start) * way > 0

    assert await versions(thread) == [(1, "", True), (2, f"part={quote(part)}", True), (3, f"step={step}", True),
                                      (4, done["state"], True)]
    assert gpu_waiting(redis_db) == 0  # no model was asked

    # A follow-up unrelated to the page is not forced onto it: this backend writes it.
    events = await follow_up_queued(ws, thread, unrelated)
    assert [e["type"] for e in events] == ["queued", "topic"] and events[1]["source"] == "model"
    assert gpu_waiting(redis_db) == 1


async def follow_up_queued(ws, thread: Thread, question: str) -> list[dict]:
    await ws.send_json_to({"type": "ask", "question": question, "thread": str(thread.pk)})
    seen: list[dict] = []
    await receive_until(ws, {"topic", "error"}, seen, timeout=20)
    return seen


@pytest.fixture
def demo_backend(settings, monkeypatch):
    """The demo checkpoint, which writes only the lessons it learned (not the English heart lesson)."""
    settings.MODEL_BACKEND = "clover"
    monkeypatch.delenv("MODEL_PATH", raising=False)


async def test_with_a_backend_that_cannot_write_the_lesson_the_page_still_answers_and_the_rest_gets_nearest_topics(
    connect, session_key, redis_db, demo_backend
):
    thread = await lesson_thread(session_key, "heart")
    ws = await connect()
    *_, done = await follow_up(ws, thread, "Open the left ventricle")
    assert done["type"] == "done" and done["state"] == "part=Left%20ventricle"

    [error] = await follow_up(ws, thread, "How does the kidney clean blood?")
    assert (error["type"], error["code"], error["generation"]) == ("error", "unknown_topic", None)
    assert "cannot show that" in error["message"]
    assert error["nearest"] and "heart" not in [t["slug"] for t in error["nearest"]]
    assert await versions(thread) == [(1, "", True), (2, "part=Left%20ventricle", True)]
    assert gpu_waiting(redis_db) == 0


async def test_a_follow_up_that_names_a_part_of_a_page_the_teacher_hid_is_refused_and_writes_nothing(
    connect, session_key, redis_db
):
    thread = await lesson_thread(session_key, "volcanoes", hidden=True)
    ws = await connect()
    [error] = await follow_up(ws, thread, "Tell me about the magma chamber")
    assert (error["type"], error["code"]) == ("error", "cannot_revise")
    assert "hid this page" in error["message"]
    assert len(await versions(thread)) == 1 and gpu_waiting(redis_db) == 0


@database_sync_to_async
def hide(thread: Thread, version: int) -> None:
    thread.pages.filter(version=version).update(hidden=True)


async def test_a_follow_up_on_a_page_the_teacher_hid_in_another_state_is_refused_too(connect, session_key, redis_db):
    thread = await lesson_thread(session_key, "heart")
    ws = await connect()
    *_, done = await follow_up(ws, thread, "Tell me about the valves")
    assert done["version"] == 2
    await hide(thread, 1)  # the lesson as written; version 2, the same page with its valves open, stays shown
    [error] = await follow_up(ws, thread, "What is the septum?")
    assert (error["type"], error["code"]) == ("error", "cannot_revise") and "hid this page" in error["message"]
    assert len(await versions(thread)) == 2 and gpu_waiting(redis_db) == 0


async def test_the_link_of_a_state_version_opens_the_page_in_its_state(connect, session_key, client):
    thread = await lesson_thread(session_key, "zh-volcanoes")
    ws = await connect()
    *_, done = await follow_up(ws, thread, "给我看看火山口")
    client.cookies["sessionid"] = session_key
    opened = await database_sync_to_async(client.get)(f"/pages/{done['page']}/open/")
    assert opened.status_code == 302 and opened["Location"].endswith(f"#part={quote('火山口')}")
    download = await database_sync_to_async(client.get)(f"/pages/{done['page']}/open/?download=1")
    assert "#" not in download["Location"]


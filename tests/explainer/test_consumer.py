"""The learner's socket answers every bad message with an `error`, stays open, and writes nothing half-done."""

from __future__ import annotations

import json
import time

import pytest
from channels.db import database_sync_to_async

from explainer.models import Generation, PageVersion, Thread
from model_worker.contract import lifecycle, stream
from model_worker.contract.events import Queued, Retry
from tests.support.queues import gpu_messages

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@pytest.fixture(autouse=True)
def test_backend(monkeypatch, tmp_path):
    """The backend the workers would run, with no checkpoint that limits what it writes: every library
    question is queued for it, whatever checkpoint lies in var/."""
    from tests.support.net import TEST_BACKEND

    monkeypatch.setenv("MODEL_BACKEND", TEST_BACKEND)
    monkeypatch.setenv("MODEL_PATH", str(tmp_path))


@pytest.fixture(scope="module", autouse=True)
def library_built():
    """The library index is built once per process (several seconds on a busy machine): build it before
    the first ask, so a test's few-second wait for `queued` measures the socket, not the index (nothing
    learned: the index a first ask finds cached)."""
    from explainer.selectors.library import index_for, library_pages

    index_for(library_pages())


@database_sync_to_async
def counts() -> tuple[int, int, int]:
    return Thread.objects.count(), Generation.objects.count(), PageVersion.objects.count()


async def ask_and_expect_error(ws, payload, code: str) -> dict:
    await ws.send_to(text_data=payload if isinstance(payload, str) else json.dumps(payload))
    event = await ws.receive_json_from(timeout=5)
    assert event["type"] == "error", event
    assert event["code"] == code, event
    assert event["message"]
    return event


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ("this is not json", "bad_json"),
        ('{"type": "ask", "question": "x", "z": ' + "[" * 5000 + "]" * 5000 + "}", "bad_json"),  # nested too deep
        ("[1, 2, 3]", "bad_message"),
        ({"question": "no type"}, "bad_message"),
        ({"type": "dance"}, "unknown_type"),
        ({"type": "ask"}, "missing_field"),
        ({"type": "ask", "question": 42}, "bad_field"),
        ({"type": "ask", "question": "Why?", "lang": "fr"}, "bad_field"),
        ({"type": "ask", "question": "Why?", "lang": ""}, "bad_field"),
        ({"type": "ask", "question": "Why?", "thread": "not-an-id"}, "bad_field"),
        ({"type": "ask", "question": "   "}, "empty_question"),
        ({"type": "ask", "question": "<|endoftext|> <|im_start|>"}, "empty_question"),
        ({"type": "ask", "question": "x" * 50_000}, "question_too_long"),
        ({"type": "cancel"}, "missing_field"),
        ({"type": "resume", "generation": "2b0c8c1e-6a4e-4d38-9c43-1d5b7f0f2a11"}, "missing_field"),
        ({"type": "resume", "generation": "2b0c8c1e-6a4e-4d38-9c43-1d5b7f0f2a11", "after": -1}, "bad_field"),
        ({"type": "watch"}, "missing_field"),
        ({"type": "watch", "thread": "not-an-id"}, "bad_field"),
        ({"type": "watch", "thread": "2b0c8c1e-6a4e-4d38-9c43-1d5b7f0f2a11"}, "unknown_thread"),
    ],
)
async def test_a_bad_message_gets_an_error_and_writes_nothing(connect, payload, code):
    ws = await connect()
    await ask_and_expect_error(ws, payload, code)
    assert await counts() == (0, 0, 0)


async def test_the_socket_stays_usable_after_bad_messages(connect, redis_db):
    ws = await connect()
    await ask_and_expect_error(ws, "{oops", "bad_json")
    await ask_and_expect_error(ws, {"type": "ask", "question": ""}, "empty_question")
    await ws.send_json_to({"type": "ask", "question": "Why is the sky blue?"})
    queued = await ws.receive_json_from(timeout=5)
    assert queued["type"] == "queued"
    assert queued["id"] == 1
    assert queued["position"] == 0
    generation = await database_sync_to_async(Generation.objects.get)(pk=queued["generation"])
    assert str(generation.thread_id) == queued["thread"]
    assert generation.status == Generation.Status.QUEUED
    # The GPU task is on its queue, named as the worker expects.
    [body] = gpu_messages(redis_db)
    assert body["headers"]["task"] == "model_worker.generate_page"


async def test_queue_position_counts_the_generations_ahead(connect):
    ws = await connect()
    positions = []
    for question in ("Why is the sky blue?", "How do tides work?", "Why do magnets stick?"):
        await ws.send_json_to({"type": "ask", "question": question})
        positions.append((await ws.receive_json_from(timeout=5))["position"])
        assert (await ws.receive_json_from(timeout=5))["type"] == "topic"
    assert positions == [0, 1, 2]


async def test_another_browser_cannot_cancel_follow_up_or_resume_my_generation(connect, redis_db):
    mine = await connect()
    await mine.send_json_to({"type": "ask", "question": "What is light?"})
    queued = await mine.receive_json_from(timeout=5)

    stranger = await connect("someone-elses-session-key")
    await ask_and_expect_error(stranger, {"type": "cancel", "generation": queued["generation"]}, "unknown_generation")
    await ask_and_expect_error(
        stranger, {"type": "resume", "generation": queued["generation"], "after": 0}, "unknown_generation"
    )
    await ask_and_expect_error(
        stranger, {"type": "ask", "question": "And sound?", "thread": queued["thread"]}, "unknown_thread"
    )
    assert redis_db.get(stream.key(queued["generation"], "cancel")) is None


async def test_resuming_past_the_last_event_is_refused_and_resuming_from_it_waits_for_the_next(connect, redis_db):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "What is light?"})
    queued = await ws.receive_json_from(timeout=5)
    assert (await ws.receive_json_from(timeout=5))["id"] == 2  # its topic
    gid = queued["generation"]
    for after in (3, 10**30):  # an id this stream never gave, however large
        event = await ask_and_expect_error(ws, {"type": "resume", "generation": gid, "after": after}, "bad_field")
        assert "last event (2)" in event["message"]
    other = await connect()
    await other.send_json_to({"type": "resume", "generation": gid, "after": 2})
    stream.append(redis_db, gid, Retry(attempt=2, code="worker_lost", message="again"))
    event = await other.receive_json_from(timeout=5)
    assert (event["type"], event["id"]) == ("retry", 3)


async def test_cancel_raises_the_flag_the_worker_checks_each_block(connect, redis_db):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "What is light?"})
    queued = await ws.receive_json_from(timeout=5)
    assert (await ws.receive_json_from(timeout=5))["type"] == "topic"
    await ws.send_json_to({"type": "cancel", "generation": queued["generation"]})
    await ws.send_json_to({"type": "dance"})  # a reply to this proves the cancel was handled first
    while (event := await ws.receive_json_from(timeout=5)).get("code") != "unknown_type":
        assert event["type"] in {"queued", "error"}  # the stream's own news: cancelled while queued
    assert stream.stop_due(stream.flags(redis_db, queued["generation"]))


async def test_a_question_stopped_while_queued_is_cancelled_at_once_and_no_worker_writes_it(connect, redis_db):
    """Before, the stop waited for a worker to take the task (tens of seconds behind a queue)."""
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "What is light?"})
    queued = await ws.receive_json_from(timeout=5)
    assert (await ws.receive_json_from(timeout=5))["type"] == "topic"
    await ws.send_json_to({"type": "cancel", "generation": queued["generation"]})
    event = await ws.receive_json_from(timeout=5)
    while event["type"] == "queued":
        event = await ws.receive_json_from(timeout=5)
    assert (event["type"], event["code"]) == ("error", "cancelled")
    generation = await database_sync_to_async(Generation.objects.get)(pk=queued["generation"])
    assert generation.status == Generation.Status.CANCELLED
    # The worker that takes the task later finds it finished.
    assert lifecycle.claim(redis_db, queued["generation"], "late-worker") == lifecycle.FINISHED


async def test_a_worker_that_died_mid_page_is_reported_on_the_open_socket_by_the_reaper(connect, redis_db,
                                                                                       session_key):
    from datetime import timedelta

    from django.utils import timezone

    from explainer.services.lifecycle import generations_reap

    @database_sync_to_async
    def old_generation():
        thread = Thread.objects.create(session_key=session_key)
        generation = Generation.objects.create(thread=thread, question="What is heat?")
        Generation.objects.filter(pk=generation.pk).update(created_at=timezone.now() - timedelta(minutes=1))
        return generation

    generation = await old_generation()
    gid = str(generation.pk)
    stream.append(redis_db, gid, Queued(thread=str(generation.thread_id), position=0))
    for _ in range(lifecycle.MAX_ATTEMPTS):  # a worker took it, and died, twice
        lifecycle.claim(redis_db, gid, "died")
        lifecycle.release(redis_db, gid, "died")

    ws = await connect()
    await ws.send_json_to({"type": "resume", "generation": gid, "after": 1})
    assert await database_sync_to_async(generations_reap)(now=time.time() + 60) == {gid: "fail_lost"}
    event = await ws.receive_json_from(timeout=10)
    assert (event["type"], event["code"], event["generation"]) == ("error", "worker_lost", gid)
    assert event["id"] == 2
    await database_sync_to_async(generation.refresh_from_db)()
    assert generation.status == Generation.Status.FAILED


async def test_queue_positions_are_sent_again_as_a_generation_ahead_leaves(connect, redis_db):
    from explainer.services.finishing import generation_finish
    from model_worker.contract.pages import PageOutcome

    ws = await connect()
    generations = []
    for question in ("Why is the sky blue?", "How do tides work?", "Why do magnets stick?"):
        await ws.send_json_to({"type": "ask", "question": question})
        generations.append((await ws.receive_json_from(timeout=5))["generation"])
        assert (await ws.receive_json_from(timeout=5))["type"] == "topic"
    first, second, third = generations
    lifecycle.claim(redis_db, second, "a-worker")  # already running: it needs no position
    await database_sync_to_async(generation_finish)(generation_id=first, outcome=PageOutcome.failed("x", "gone"))

    def positions(gid):
        return [e["position"] for e in stream.decode(stream.since(redis_db, gid)) if e["type"] == "queued"]

    assert positions(third) == [2, 1]
    assert positions(second) == [1]


async def test_when_redis_is_down_the_socket_answers_unavailable_and_stays_open(connect, settings):
    from explainer.settings.base import caches, channel_layers
    from tests.support.net import free_port

    ws = await connect()
    down = f"redis://127.0.0.1:{free_port()}/15"  # nothing listens there
    settings.REDIS_URL, settings.CACHES, settings.CHANNEL_LAYERS = down, caches(down), channel_layers(down)
    await ask_and_expect_error(ws, {"type": "ask", "question": "Why is the sky blue?"}, "unavailable")
    outage = await connect()  # a socket opened during the outage is accepted too
    await ask_and_expect_error(outage, {"type": "ask", "question": "Why is the sky blue?"}, "unavailable")
    await ask_and_expect_error(ws, {"type": "dance"}, "unknown_type")  # still open
    assert await counts() == (0, 0, 0)


async def test_a_busy_database_answers_unavailable_and_the_socket_stays_open(connect, monkeypatch):
    """SQLite's lock held past its timeout ("database is locked") used to close the socket with 1011."""
    from django.db import OperationalError

    from explainer import consumers

    def locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(consumers, "_generation_create", database_sync_to_async(locked))
    ws = await connect()
    event = await ask_and_expect_error(ws, {"type": "ask", "question": "Why is the sky blue?"}, "unavailable")
    assert event["request"] == "ask"
    await ask_and_expect_error(ws, {"type": "dance"}, "unknown_type")  # still open


async def test_a_page_a_teacher_hides_disappears_from_the_open_socket(connect):
    from explainer.services.review import page_set_hidden

    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "What is light?"})
    queued = await ws.receive_json_from(timeout=5)
    assert (await ws.receive_json_from(timeout=5))["type"] == "topic"

    @database_sync_to_async
    def store_and_hide():
        generation = Generation.objects.get(pk=queued["generation"])
        page = PageVersion.objects.create(thread=generation.thread, generation=generation, version=1, html="<p>x</p>")
        page_set_hidden(page=page, hidden=True)
        return page

    page = await store_and_hide()
    event = await ws.receive_json_from(timeout=5)
    assert (event["type"], event["page"], event["thread"]) == ("page_hidden", page.pk, queued["thread"])


async def test_a_learner_removed_while_their_socket_is_open_asks_as_nobody_s_learner(connect, session_key):
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    from explainer.models import Classroom, Learner
    from explainer.services.classrooms import learner_remove

    @database_sync_to_async
    def a_learner_of_this_browser():
        teacher = get_user_model().objects.create_user("t", password="pw-123456789")
        learner = Learner.objects.create(classroom=Classroom.objects.create(name="7B", teacher=teacher),
                                         display_name="Mia")
        session = SessionStore(session_key)
        session["learner_id"] = learner.pk
        session.save()
        return learner

    learner = await a_learner_of_this_browser()
    ws = await connect()

    async def ask(question: str) -> Generation:
        await ws.send_json_to({"type": "ask", "question": question})
        queued = await ws.receive_json_from(timeout=5)
        assert queued["type"] == "queued", queued
        assert (await ws.receive_json_from(timeout=5))["type"] == "topic"
        return await database_sync_to_async(Generation.objects.get)(pk=queued["generation"])

    assert (await ask("Why is the sky blue?")).learner_id == learner.pk
    await database_sync_to_async(learner_remove)(learner=learner)
    after = await ask("How do tides work?")
    assert (after.learner_id, after.classroom_id) == (None, None)


async def test_a_reopened_thread_page_watches_its_thread_and_hears_a_teacher_hide_its_page(connect, session_key):
    """An anonymous browser's reloaded thread page is in no class: `watch` is how it hears a teacher."""
    from explainer.services.review import page_set_hidden

    @database_sync_to_async
    def a_finished_thread(key: str) -> PageVersion:
        thread = Thread.objects.create(session_key=key)
        generation = Generation.objects.create(thread=thread, question="What is light?", status="done")
        return PageVersion.objects.create(thread=thread, generation=generation, version=1, html="<p>x</p>")

    page = await a_finished_thread(session_key)
    strangers = await a_finished_thread("another-browser")
    ws = await connect()
    await ask_and_expect_error(ws, {"type": "watch", "thread": str(strangers.thread_id)}, "unknown_thread")
    await ws.send_json_to({"type": "watch", "thread": str(page.thread_id)})
    assert await ws.receive_json_from(timeout=5) == {"type": "watching", "id": 0, "thread": str(page.thread_id)}

    await database_sync_to_async(page_set_hidden)(page=strangers, hidden=True)  # not this socket's thread
    await database_sync_to_async(page_set_hidden)(page=page, hidden=True)
    event = await ws.receive_json_from(timeout=5)
    assert (event["type"], event["page"], event["thread"]) == ("page_hidden", page.pk, str(page.thread_id))
    assert await ws.receive_nothing(timeout=0.5)
    # Shown again, it comes with what a view that never listed it needs to list it.
    await database_sync_to_async(page_set_hidden)(page=page, hidden=False)
    event = await ws.receive_json_from(timeout=5)
    assert (event["type"], event["page"], event["question"], event["check"]) == ("page_shown", page.pk,
                                                                               "What is light?", "")


async def test_a_message_longer_than_any_of_the_protocol_is_answered_unread_and_the_socket_stays_open(
    connect, redis_db
):
    from explainer.consumers import MESSAGE_MAX_CHARS

    ws = await connect()
    oversized = {"type": "ask", "question": "Why is the sky blue? " * (MESSAGE_MAX_CHARS // 20)}
    error = await ask_and_expect_error(ws, oversized, "message_too_big")
    assert str(MESSAGE_MAX_CHARS) in error["message"]
    await ws.send_to(bytes_data=b"[" * (MESSAGE_MAX_CHARS + 1))
    assert (await ws.receive_json_from(timeout=5))["code"] == "message_too_big"
    assert await counts() == (0, 0, 0)
    await ws.send_json_to({"type": "ask", "question": "Why is the sky blue?"})
    assert (await ws.receive_json_from(timeout=5))["type"] == "queued"

"""Ask over the websocket, a real GPU worker denoises the page into Redis, a real qa worker stores it."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from channels.db import database_sync_to_async

from explainer.models import Generation, PageVersion
from model_worker.contract import stream
from model_worker.contract.pages import PageRequest
from tests.support import sockets
from tests.support.denoiser import page_for
from tests.support.sockets import generation_row

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.usefixtures("celery_workers")]

TIMEOUT = 60
DISCONNECT_TIMEOUT_S = 10


async def receive_until(ws, types: set[str], seen: list[dict]) -> dict:
    return await sockets.receive_until(ws, types, seen, timeout=TIMEOUT)


async def receive_until_generation_ends(ws, seen: list[dict]) -> dict:
    return await receive_until(ws, {"done", "error"}, seen)


def assert_ids_increase_one_by_one(seen: list[dict], start: int = 1):
    ids = [e["id"] for e in seen]
    assert ids == list(range(start, start + len(ids))), ids


@database_sync_to_async
def page_row(generation_id) -> PageVersion | None:
    return PageVersion.objects.filter(generation_id=generation_id).first()


async def test_a_question_streams_drafts_and_commits_then_the_page_is_stored(connect):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "Why is the sky blue?"})
    seen: list[dict] = []
    done = await receive_until_generation_ends(ws, seen)

    assert done["type"] == "done", done
    assert_ids_increase_one_by_one(seen)
    types = [e["type"] for e in seen]
    assert types[:2] == ["queued", "topic"]  # what the router understood comes before any draft
    assert (seen[1]["slug"], seen[1]["title"], seen[1]["lang"]) == ("sky-blue", "Why the sky is blue", "en")
    assert {"draft", "commit", "stats"} <= set(types)
    # Drafts show masked positions filling in: some draft of block 0 still has a mask.
    assert any(e["type"] == "draft" and e["block"] == 0 and None in e["pieces"] for e in seen)
    expected = page_for(PageRequest(question="Why is the sky blue?", topic="sky-blue"))
    assert "".join(e["text"] for e in seen if e["type"] == "commit") == expected
    assert done["version"] == 1
    assert done["stats"]["tokens"] > 0 and done["stats"]["tokens_per_s"] > 0
    last_stats = [e for e in seen if e["type"] == "stats"][-1]
    assert last_stats["tokens"] == done["stats"]["tokens"]

    page = await page_row(done["generation"])
    assert page.html == expected
    assert f"/pages/{page.pk}/?k=" in done["page_url"]
    generation = await generation_row(done["generation"])
    assert generation.status == Generation.Status.DONE


async def test_a_follow_up_revises_the_previous_page_as_version_two(connect):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "How do tides work?"})
    first = await receive_until_generation_ends(ws, [])
    assert first["type"] == "done", first
    page_one = await page_row(first["generation"])

    await ws.send_json_to({"type": "ask", "question": "Show it with two moons", "thread": first["thread"]})
    seen: list[dict] = []
    second = await receive_until_generation_ends(ws, seen)
    assert second["type"] == "done", second
    assert second["thread"] == first["thread"]
    assert second["version"] == 2
    assert_ids_increase_one_by_one(seen)  # a new generation counts from 1 again
    page_two = await page_row(second["generation"])
    # The test denoiser writes the length of the previous page it was given into the page.
    assert re.search(r'name="previous-page-chars" content="(\d+)"', page_two.html)[1] == str(len(page_one.html))
    assert (await generation_row(second["generation"])).kind == Generation.Kind.FOLLOW_UP


async def test_resume_after_a_disconnect_replays_the_missed_events_exactly_once(connect, settings):
    settings.ORPHAN_GRACE_S = 30  # the learner comes back within the grace period
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "[[slow]] What causes the phases of the Moon?"})
    before: list[dict] = []
    await receive_until(ws, {"commit"}, before)
    generation = before[0]["generation"]
    await ws.disconnect(timeout=DISCONNECT_TIMEOUT_S)
    await asyncio.sleep(0.5)  # events keep arriving while nobody listens

    ws = await connect()
    after = before[-1]["id"]
    await ws.send_json_to({"type": "resume", "generation": generation, "after": after})
    rest: list[dict] = []
    done = await receive_until_generation_ends(ws, rest)
    assert done["type"] == "done", done
    assert_ids_increase_one_by_one(before + rest)
    commits = [e["text"] for e in before + rest if e["type"] == "commit"]
    assert "".join(commits) == page_for(PageRequest(question="[[slow]] What causes the phases of the Moon?",
                                                    topic="moon-phases"))


def last_event_id(redis_db, generation: str) -> int:
    """The newest event id in the stream right now (the socket may still be forwarding older ones)."""
    newest = redis_db.xrevrange(stream.key(generation, "events"), count=1)
    return int(newest[0][0].split(b"-")[0]) if newest else 0


def commits_after(redis_db, generation: str, event_id: int) -> list[dict]:
    return [e for e in stream.decode(stream.since(redis_db, generation, event_id)) if e["type"] == "commit"]


async def test_cancel_stops_the_generation_within_one_block(connect, redis_db):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "[[slow]] Why do we have seasons?"})
    seen: list[dict] = []
    await receive_until(ws, {"commit"}, seen)
    generation = seen[0]["generation"]
    await ws.send_json_to({"type": "cancel", "generation": generation})
    await ws.send_json_to({"type": "dance"})  # answered only after the cancel was handled
    await receive_until(ws, {"error"}, seen)
    at_cancel = last_event_id(redis_db, generation)
    end = await receive_until_generation_ends(ws, seen)

    assert (end["type"], end["code"]) == ("error", "cancelled")
    assert len(commits_after(redis_db, generation, at_cancel)) <= 1
    assert (await generation_row(generation)).status == Generation.Status.CANCELLED
    assert await page_row(generation) is None


async def test_when_the_last_viewer_leaves_the_generation_stops_within_one_block(connect, redis_db):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "[[slow]] How do volcanoes erupt?"})
    generation = (await receive_until(ws, {"queued"}, []))["generation"]
    await ws.disconnect(timeout=DISCONNECT_TIMEOUT_S)  # the grace period is 0 in tests
    at_leave = last_event_id(redis_db, generation)

    for _ in range(200):
        row = await generation_row(generation)
        if row.is_finished:
            break
        await asyncio.sleep(0.1)
    assert row.status == Generation.Status.CANCELLED, (
        redis_db.mget(*(stream.key(generation, k) for k in ("cancel", "orphaned", "claim"))),
        redis_db.smembers(stream.key(generation, "viewers")), at_leave, time.time())
    assert len(commits_after(redis_db, generation, at_leave)) <= 1


async def test_a_backend_failure_reaches_the_learner_as_an_error(connect):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "[[fail]] What affects the period of a pendulum?"})
    end = await receive_until_generation_ends(ws, [])
    assert (end["type"], end["code"]) == ("error", "generation_failed")
    assert "asked to fail" in end["message"]
    row = await generation_row(end["generation"])
    assert (row.status, row.error_code) == (Generation.Status.FAILED, "generation_failed")


async def test_a_backend_failure_on_a_chinese_question_is_said_in_chinese(connect):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "[[fail]] 单摆的周期和什么有关？"})
    end = await receive_until_generation_ends(ws, [])
    assert (end["type"], end["code"], end["message"]) == ("error", "generation_failed", "这一页没能写出来。")


"""The reaper sends again, or fails with a clear error, every generation nobody will finish, and the
learner hears about it; a generation a worker still holds, or whose task waits on the queue, is left be."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from explainer.models import Generation, PageVersion, Thread
from explainer.services.lifecycle import generations_reap
from model_worker.contract import lifecycle, stream
from tests.support.queues import gpu_requests

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

REQUEST = {"question": "Why is the sky blue?", "lang": "en", "previous_page": None, "topic_note": None,
           "topic": "sky-blue"}


def old_generation(session_key: str, seconds_ago: float = 60) -> str:
    thread = Thread.objects.create(session_key=session_key)
    generation = Generation.objects.create(thread=thread, question="Why is the sky blue?")
    Generation.objects.filter(pk=generation.pk).update(created_at=timezone.now() - timedelta(seconds=seconds_ago))
    return str(generation.pk)


def events_of(redis_db, generation_id: str) -> list[dict]:
    return stream.decode(stream.since(redis_db, generation_id))


def gpu_tasks(redis_db) -> list[str]:
    """The generation ids of the generate_page messages waiting."""
    return [generation_id for generation_id, _request in gpu_requests(redis_db)]


def died_mid_page(redis_db, generation_id: str, attempts: int) -> None:
    """A worker claimed it `attempts` times, and the last one stopped beating a minute ago."""
    lifecycle.keep_request(redis_db, generation_id, REQUEST)
    for _ in range(attempts):
        lifecycle.claim(redis_db, generation_id, "died")
        lifecycle.release(redis_db, generation_id, "died")
    redis_db.set(stream.key(generation_id, "beat"), repr(time.time() - 60))


def test_a_generation_whose_worker_died_is_sent_again_once_and_the_learner_hears_it(redis_db, session_key):
    gid = old_generation(session_key)
    died_mid_page(redis_db, gid, attempts=1)  # and no redelivery took it within LOST_AFTER_S
    assert generations_reap() == {gid: "requeue"}
    [queued] = events_of(redis_db, gid)
    assert (queued["type"], queued["requeued"], queued["position"], queued["code"]) == ("queued", True, 0,
                                                                                      "worker_lost")
    assert len(gpu_tasks(redis_db)) == 1 and gid in gpu_tasks(redis_db)[0]
    assert Generation.objects.get(pk=gid).status == Generation.Status.QUEUED


def test_a_generation_that_lost_its_worker_twice_fails_with_worker_lost(redis_db, session_key):
    gid = old_generation(session_key)
    died_mid_page(redis_db, gid, attempts=2)
    assert generations_reap() == {gid: "fail_lost"}
    [error] = events_of(redis_db, gid)
    assert (error["type"], error["code"]) == ("error", "worker_lost") and "try again" in error["message"]
    assert Generation.objects.get(pk=gid).status == Generation.Status.FAILED
    assert not gpu_tasks(redis_db)


def test_a_queued_generation_whose_task_vanished_with_redis_is_sent_again_then_failed(redis_db, session_key):
    gid = old_generation(session_key)
    lifecycle.keep_request(redis_db, gid, REQUEST)  # the request survived; ticket and queue did not
    assert generations_reap() == {gid: "requeue"}
    assert len(gpu_tasks(redis_db)) == 1
    redis_db.delete("gpu", stream.key(gid, "ticket"))  # lost again
    assert generations_reap() == {gid: "fail_gone"}
    assert events_of(redis_db, gid)[-1]["code"] == "unavailable"
    assert Generation.objects.get(pk=gid).error_code == "unavailable"


def test_a_queued_generation_with_nothing_left_in_redis_fails_with_unavailable(redis_db, session_key):
    gid = old_generation(session_key)
    assert generations_reap() == {gid: "fail_gone"}
    assert Generation.objects.get(pk=gid).status == Generation.Status.FAILED


def test_a_finished_page_whose_finish_task_was_lost_is_recorded_from_redis(redis_db, session_key, settings):
    settings.REAPER_FINISH_AFTER_S = 1
    gid = old_generation(session_key)
    lifecycle.claim(redis_db, gid, "w")
    lifecycle.finish(redis_db, gid, "w", {"status": "done", "html": "<!doctype html><p>sky</p>", "stats": {}})
    assert generations_reap() == {}  # the finish task may still be on its way
    time.sleep(1.2)
    assert generations_reap() == {gid: "record"}
    assert Generation.objects.get(pk=gid).status == Generation.Status.DONE
    assert PageVersion.objects.get(generation_id=gid).html == "<!doctype html><p>sky</p>"
    assert [e["type"] for e in events_of(redis_db, gid)] == ["done"]


def test_generations_held_waiting_or_just_asked_are_left_alone(redis_db, session_key):
    running, waiting = (old_generation(session_key) for _ in range(2))
    young = old_generation(session_key, seconds_ago=0)
    lifecycle.claim(redis_db, running, "alive")
    lifecycle.ticket(redis_db, waiting)
    assert generations_reap() == {}
    assert all(not events_of(redis_db, g) for g in (running, waiting, young))


def test_the_learner_hears_at_once_that_a_dead_workers_page_is_queued_again(redis_db, session_key):
    gid = old_generation(session_key)
    died_mid_page(redis_db, gid, attempts=1)
    redis_db.set(stream.key(gid, "beat"), repr(time.time()))  # lapsed a moment ago: Celery redelivers it
    assert generations_reap() == {gid: "tell"}
    assert generations_reap() == {}  # told once
    [queued] = events_of(redis_db, gid)
    assert (queued["type"], queued["requeued"], queued["code"]) == ("queued", True, "worker_lost")
    assert "written again" in queued["message"]
    assert not gpu_tasks(redis_db)  # the redelivery is Celery's; the reaper sends nothing yet

"""Workers beat into Redis per queue; readiness reads who is alive in one round trip, and a worker whose beat
lapsed (or that shut down) no longer counts."""

from __future__ import annotations

import time

from model_worker.contract import workers


def test_a_beat_makes_a_worker_live_on_each_of_its_queues_and_no_other(redis_db):
    workers.beat(redis_db, ["qa"], "qa@one:1")
    workers.beat(redis_db, ["gpu"], "gpu@one:2")
    workers.beat(redis_db, ["gpu"], "gpu@two:3")

    assert workers.live(redis_db) == {"gpu": ["gpu@one:2", "gpu@two:3"], "finish": [], "qa": ["qa@one:1"]}


def test_a_worker_that_stops_beating_drops_out_once_its_beat_lapses(redis_db):
    workers.beat(redis_db, ["gpu"], "gpu@one:1", ttl_s=1)
    workers.beat(redis_db, ["gpu"], "gpu@two:2", ttl_s=30)
    assert workers.live(redis_db)["gpu"] == ["gpu@one:1", "gpu@two:2"]

    time.sleep(1.3)

    assert workers.live(redis_db)["gpu"] == ["gpu@two:2"]


def test_a_worker_beating_again_stays_live(redis_db):
    workers.beat(redis_db, ["finish"], "finish@one:1", ttl_s=1)
    time.sleep(0.7)
    workers.beat(redis_db, ["finish"], "finish@one:1", ttl_s=1)
    time.sleep(0.7)

    assert workers.live(redis_db)["finish"] == ["finish@one:1"]


def test_a_worker_shutting_down_lets_go_at_once(redis_db):
    workers.beat(redis_db, ["gpu", "qa"], "both@one:1")

    workers.gone(redis_db, ["gpu", "qa"], "both@one:1")

    assert workers.live(redis_db) == {"gpu": [], "finish": [], "qa": []}


def test_the_heartbeat_is_a_step_of_both_celery_apps():
    from explainer.celery import app as web_app
    from model_worker.worker.celery_app import app as gpu_app

    assert workers.Heartbeat in gpu_app.steps["consumer"]
    assert workers.Heartbeat in web_app.steps["consumer"]

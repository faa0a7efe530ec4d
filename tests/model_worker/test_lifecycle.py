"""Who holds a generation: one worker at a time, a claim that lapses when its worker dies, an outcome kept."""

from __future__ import annotations

import time

from model_worker.contract import lifecycle
from model_worker.worker.claim import Claim


def state(r, generation_id="g") -> lifecycle.State:
    return lifecycle.State.of(lifecycle.state(r, generation_id))


def test_one_worker_at_a_time_holds_a_generation_and_nobody_after_it_finished(redis_db):
    lifecycle.ticket(redis_db, "g")
    assert state(redis_db).ticket is not None
    assert lifecycle.claim(redis_db, "g", "w1") == 1
    assert state(redis_db).ticket is None  # off the queue once claimed
    assert lifecycle.claim(redis_db, "g", "w2") == lifecycle.HELD
    assert not lifecycle.refresh(redis_db, "g", "w2")  # a stranger cannot keep it alive
    assert not lifecycle.finish(redis_db, "g", "w2", {"status": "done"})
    assert lifecycle.finish(redis_db, "g", "w1", {"status": "done", "html": "<p>"})
    assert lifecycle.claim(redis_db, "g", "w3") == lifecycle.FINISHED
    assert state(redis_db).outcome == {"status": "done", "html": "<p>"}


def test_a_dead_workers_claim_lapses_and_the_next_delivery_takes_it_as_attempt_two(redis_db):
    assert lifecycle.claim(redis_db, "g", "dead", ttl_s=1) == 1
    assert state(redis_db).running
    time.sleep(1.2)
    assert not state(redis_db).running
    assert lifecycle.claim(redis_db, "g", "next", ttl_s=1) == 2
    assert not lifecycle.refresh(redis_db, "g", "dead")  # the old holder, if it wakes, is told it lost it


def test_the_heartbeat_thread_keeps_a_long_block_claimed_past_the_claims_ttl(redis_db):
    assert lifecycle.claim(redis_db, "g", "w1", ttl_s=1) == 1
    with Claim(redis_db, "g", "w1", ttl_s=1, every_s=0.2) as held:
        time.sleep(2)
        assert state(redis_db).running and not held.lost
    time.sleep(1.2)
    assert not state(redis_db).running  # stopped beating: it lapses


def test_releasing_lets_a_retry_take_the_generation_at_once(redis_db):
    lifecycle.claim(redis_db, "g", "w1")
    lifecycle.release(redis_db, "g", "someone-else")
    assert lifecycle.claim(redis_db, "g", "w2") == lifecycle.HELD
    lifecycle.release(redis_db, "g", "w1")
    assert lifecycle.claim(redis_db, "g", "w2") == 2

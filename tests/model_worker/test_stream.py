"""The per-generation event stream: ordered ids, exact replay, bounded and expiring, stop flags."""

from __future__ import annotations

import time

from model_worker.contract import stream
from model_worker.contract.events import Commit, Done, Draft, Queued, Stats


def test_event_ids_increase_one_by_one_and_replay_starts_after_a_given_id(redis_db):
    for n in range(5):
        stream.append(redis_db, "g1", Draft(block=0, pieces=[None, f"t{n}"]))
    everything = stream.decode(stream.since(redis_db, "g1"))
    assert [e["id"] for e in everything] == [1, 2, 3, 4, 5]
    assert everything[0] == {"id": 1, "type": "draft", "block": 0, "pieces": [None, "t0"]}
    assert [e["id"] for e in stream.decode(stream.since(redis_db, "g1", after=3))] == [4, 5]
    reply = stream.read(redis_db, "g1", after=4, block_ms=10)
    assert [e["id"] for e in stream.decode(reply[0][1])] == [5]


def test_generations_count_their_events_separately(redis_db):
    stream.append(redis_db, "a", Queued(thread="t", position=0))
    stream.append(redis_db, "b", Queued(thread="t", position=1))
    assert stream.append(redis_db, "a", Done(thread="t", page=1, page_url="/pages/1/", version=1)) == 2
    assert [e["type"] for e in stream.decode(stream.since(redis_db, "b"))] == ["queued"]


def test_text_survives_the_stream_unchanged(redis_db):
    stream.append(redis_db, "g", Commit(block=0, text='月亮 "quotes" \\ <html>\n'))
    assert stream.decode(stream.since(redis_db, "g"))[0]["text"] == '月亮 "quotes" \\ <html>\n'


def test_the_stream_is_capped_and_expires(redis_db):
    for _ in range(400):
        stream.append(redis_db, "g", Draft(block=0, pieces=[]), maxlen=100, ttl_s=60)
    assert redis_db.xlen(stream.key("g", "events")) < 400
    assert 0 < redis_db.ttl(stream.key("g", "events")) <= 60
    assert 0 < redis_db.ttl(stream.key("g", "seq")) <= 60


def test_a_blocking_read_with_nothing_new_returns_empty(redis_db):
    stream.append(redis_db, "g", Queued(thread="t", position=0))
    started = time.monotonic()
    assert not stream.read(redis_db, "g", after=1, block_ms=200)
    assert time.monotonic() - started >= 0.15


def test_cancel_means_stop(redis_db):
    assert not stream.stop_due(stream.flags(redis_db, "g"))
    stream.cancel(redis_db, "g")
    assert stream.stop_due(stream.flags(redis_db, "g"))


def test_the_last_viewer_leaving_orphans_after_the_grace_period(redis_db):
    stream.viewer_join(redis_db, "g", "socket-1")
    stream.viewer_join(redis_db, "g", "socket-2")
    assert stream.viewer_leave(redis_db, "g", "socket-1", grace_s=0) == 0
    assert not stream.stop_due(stream.flags(redis_db, "g"))
    assert stream.viewer_leave(redis_db, "g", "socket-2", grace_s=5) == 1
    values = stream.flags(redis_db, "g")
    assert not stream.stop_due(values)
    assert stream.stop_due(values, now=time.time() + 6)


def test_a_viewer_coming_back_lifts_the_orphan_deadline(redis_db):
    stream.viewer_join(redis_db, "g", "socket-1")
    stream.viewer_leave(redis_db, "g", "socket-1", grace_s=0)
    stream.viewer_join(redis_db, "g", "socket-2")
    assert not stream.stop_due(stream.flags(redis_db, "g"))



def test_one_exchange_appends_events_in_order_and_reads_the_stop_flags(redis_db):
    stream.append(redis_db, "g", Draft(block=0, pieces=["a"]))
    flags = stream.exchange(redis_db, "g", [Commit(block=0, text="a"),
                                            Stats(blocks=1, tokens=1, seconds=0.1, tokens_per_s=10.0)])
    assert not stream.stop_due(flags)
    assert [(e["id"], e["type"]) for e in stream.decode(stream.since(redis_db, "g"))] == [
        (1, "draft"), (2, "commit"), (3, "stats")]
    stream.cancel(redis_db, "g")
    assert stream.stop_due(stream.exchange(redis_db, "g", []))

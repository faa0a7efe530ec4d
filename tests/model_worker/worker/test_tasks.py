"""The GPU task: streams a page into Redis, hands the outcome to the qa queue once, and never needs Django."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from model_worker.backends.base import PageResult
from model_worker.contract import lifecycle, stream
from model_worker.contract.events import Commit, Queued
from model_worker.contract.pages import PageRequest
from model_worker.worker import claim, stream_sink, tasks, warm
from model_worker.worker.run import run_page
from tests.support.denoiser import DeterministicDenoiser, page_for
from tests.support.net import ROOT, TEST_BACKEND


class ListSink:
    def __init__(self, stop_after_blocks: int | None = None):
        self.drafts, self.commits, self.stop_after_blocks = [], [], stop_after_blocks

    def on_draft(self, block, pieces):
        self.drafts.append((block, pieces))

    def on_commit(self, block, text, tokens):
        self.commits.append((block, text))

    def should_stop(self):
        return self.stop_after_blocks is not None and len(self.commits) >= self.stop_after_blocks


@pytest.fixture
def test_backend(monkeypatch):
    monkeypatch.setenv("MODEL_BACKEND", TEST_BACKEND)
    warm.backend.cache_clear()
    yield
    warm.backend.cache_clear()


@pytest.fixture
def handoffs(monkeypatch) -> list[tuple]:
    """What the task hands to the finish queue (recorded here: a worker from other tests may be consuming it)."""
    sent = []
    monkeypatch.setattr(tasks.app, "send_task", lambda name, args, queue: sent.append((name, *args, queue)))
    return sent


def test_a_finished_page_is_described_as_done_with_its_html_and_stats():
    outcome = run_page(DeterministicDenoiser(), PageRequest(question="Why is grass green?"), ListSink())
    assert outcome.status == "done"
    assert outcome.html == page_for(PageRequest(question="Why is grass green?"))
    assert outcome.stats["tokens"] > 0


def test_a_page_stopped_early_is_described_as_cancelled():
    outcome = run_page(DeterministicDenoiser(), PageRequest(question="Why?"), ListSink(stop_after_blocks=2))
    assert outcome.status == "cancelled"


def test_an_empty_page_is_a_failure_not_a_version():
    class Empty:
        def generate_page(self, request, sink):
            return PageResult(html="  \n", stats={})

    assert run_page(Empty(), PageRequest(question="Why?"), ListSink()).error_code == "empty_page"


def test_the_stream_sink_writes_each_commit_with_the_exact_token_count_so_far(redis_db):
    sink = stream_sink.StreamSink(redis_db, "g")
    assert not sink.should_stop()
    sink.on_draft(0, ["a", None, None])
    sink.on_commit(0, "abc", 3)
    sink.on_commit(1, "de", 2)
    sink.close()
    sent = stream.decode(stream.since(redis_db, "g"))
    assert [e["type"] for e in sent] == ["draft", "commit", "stats", "commit", "stats"]
    assert (sent[2]["tokens"], sent[2]["blocks"]) == (3, 1)
    assert (sent[4]["tokens"], sent[4]["blocks"]) == (5, 2) and sent[4]["tokens_per_s"] > 0


def test_blocks_stream_while_the_loop_runs_and_a_cancel_is_seen_within_a_few_write_intervals(redis_db):
    sink = stream_sink.StreamSink(redis_db, "g")
    assert not sink.should_stop()  # the first question asks Redis before the model runs
    for block in range(50):
        sink.on_commit(block, f"<{block}>", 1)  # far quicker than a screen needs: written in batches
    deadline = time.monotonic() + 5
    while len(stream.since(redis_db, "g")) < 100 and time.monotonic() < deadline:
        time.sleep(0.01)
    sent = stream.decode(stream.since(redis_db, "g"))
    assert "".join(e["text"] for e in sent if e["type"] == "commit") == "".join(f"<{b}>" for b in range(50))
    stream.cancel(redis_db, "g")
    while not sink.should_stop() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sink.should_stop()
    sink.close()


def test_a_write_that_fails_in_the_background_is_raised_to_the_decoding_loop(redis_db, monkeypatch):
    import redis

    sink = stream_sink.StreamSink(redis_db, "g")
    assert not sink.should_stop()

    def away(*args, **kwargs):
        raise redis.ConnectionError("Redis went away")

    monkeypatch.setattr(stream, "exchange", away)
    sink.on_commit(0, "abc", 3)
    with pytest.raises(redis.ConnectionError, match="went away"):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            sink.should_stop()
            time.sleep(0.01)
    sink.close(write=False)


def test_a_request_the_worker_cannot_read_is_reported_not_retried(redis_db, test_backend, handoffs):
    assert tasks.generate_page("gen-4", {"question": "What is sound?", "lang": "fr"}) == "failed"
    [(_, _, outcome, _)] = handoffs
    assert outcome["error_code"] == "bad_request" and "fr" in outcome["error_message"]


def test_the_task_streams_the_page_then_hands_the_outcome_to_the_finish_queue_once(redis_db, test_backend, handoffs):
    request = {"question": "What is sound?", "lang": "en", "previous_page": None, "topic_note": None}
    assert tasks.generate_page("gen-1", request) == "done"
    streamed = stream.decode(stream.since(redis_db, "gen-1"))
    assert "".join(e["text"] for e in streamed if e["type"] == "commit") == page_for(PageRequest(**request))
    [(name, generation_id, outcome, queue)] = handoffs
    assert (name, generation_id, queue) == ("explainer.finish_generation", "gen-1", "finish")
    assert outcome["status"] == "done" and outcome["html"] == page_for(PageRequest(**request))
    # A redelivery of the same message does nothing.
    assert tasks.generate_page("gen-1", request) == "skipped"
    assert len(handoffs) == 1


def test_a_generation_cancelled_while_queued_never_reaches_the_model(redis_db, test_backend, handoffs):
    stream.cancel(redis_db, "gen-2")
    assert tasks.generate_page("gen-2", {"question": "What is sound?"}) == "cancelled"
    assert not [e for e in stream.decode(stream.since(redis_db, "gen-2")) if e["type"] == "draft"]


def test_a_missing_checkpoint_is_reported_and_the_worker_keeps_going(redis_db, monkeypatch, tmp_path, handoffs):
    monkeypatch.setenv("MODEL_BACKEND", "model_worker.backends.clover:CloverBackend")
    monkeypatch.setenv("MODEL_PATH", str(tmp_path / "no-such-checkpoint"))
    warm.backend.cache_clear()
    try:
        assert tasks.generate_page("gen-3", {"question": "What is sound?"}) == "failed"
    finally:
        warm.backend.cache_clear()
    [(_, _, outcome, _)] = handoffs
    assert outcome["error_code"] == "model_unavailable"
    assert str(tmp_path / "no-such-checkpoint") in outcome["error_message"]


def test_the_gpu_worker_modules_load_without_django_or_the_web_app():
    code = (
        "import sys, model_worker.worker.tasks, model_worker.worker.celery_app as c; c.app.loader.init_worker();"
        "print(sorted(m for m in sys.modules if m.startswith(('explainer', 'django.conf', 'django.db', 'django.apps'))))"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "explainer.settings.dev"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("env", "words"), [
    ({"MODEL_BACKEND": "no-such-backend"}, "'no-such-backend' is not one of clover, transformers, openai"),
    ({"MODEL_BACKEND": "transformers", "MODEL_PATH": "/nonexistent/model"}, "no model folder at /nonexistent/model"),
])
def test_an_unknown_backend_or_a_folder_that_is_no_model_fails_the_generation_clearly(
        redis_db, monkeypatch, handoffs, env, words):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    warm.backend.cache_clear()
    try:
        assert tasks.generate_page("gen-15", {"question": "What is sound?"}) == "failed"
    finally:
        warm.backend.cache_clear()
    [(_, _, outcome, _)] = handoffs
    assert outcome["error_code"] == "model_unavailable" and words in outcome["error_message"]


def test_a_model_server_that_is_down_fails_the_generation_as_unavailable(redis_db, monkeypatch, handoffs):
    from tests.support.net import free_port

    monkeypatch.setenv("MODEL_BACKEND", "openai")
    monkeypatch.setenv("MODEL_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.setenv("MODEL_NAME", "page-model")
    warm.backend.cache_clear()
    try:
        assert tasks.generate_page("gen-16", {"question": "What is sound?"}) == "failed"
    finally:
        warm.backend.cache_clear()
    [(_, _, outcome, _)] = handoffs
    assert outcome["error_code"] == "model_unavailable" and "cannot be reached" in outcome["error_message"]
    assert lifecycle.State.of(lifecycle.state(redis_db, "gen-16")).claim == "finished"  # never stuck


def test_a_redelivery_while_the_dead_workers_claim_holds_waits_for_it_to_lapse(redis_db, test_backend, handoffs):
    from celery.exceptions import Retry

    stream.append(redis_db, "gen-5", Queued(thread="t", position=0))
    lifecycle.claim(redis_db, "gen-5", "a-worker-that-died")
    with pytest.raises(Retry):
        tasks.generate_page("gen-5", {"question": "What is sound?"})
    assert not handoffs


def test_a_redelivery_after_the_claim_lapsed_writes_the_page_again_from_the_start(redis_db, test_backend, handoffs):
    lifecycle.claim(redis_db, "gen-6", "a-worker-that-died", ttl_s=1)
    stream.append(redis_db, "gen-6", Commit(block=0, text="<!doc"))
    time.sleep(1.2)
    assert tasks.generate_page("gen-6", {"question": "What is sound?"}) == "done"
    streamed = stream.decode(stream.since(redis_db, "gen-6"))
    retry = next(e for e in streamed if e["type"] == "retry")
    assert (retry["attempt"], retry["code"]) == (2, "worker_lost") and retry["message"]
    after = streamed[streamed.index(retry) + 1:]
    assert "".join(e["text"] for e in after if e["type"] == "commit") == page_for(PageRequest(question="What is sound?"))
    [(_, _, outcome, _)] = handoffs
    assert outcome["status"] == "done"


def test_a_page_that_already_cost_two_workers_fails_with_worker_lost_instead_of_running(redis_db, test_backend,
                                                                                      handoffs):
    for _ in range(lifecycle.MAX_ATTEMPTS):
        lifecycle.claim(redis_db, "gen-7", "died", ttl_s=1)
        lifecycle.release(redis_db, "gen-7", "died")
    assert tasks.generate_page("gen-7", {"question": "What is sound?"}) == "failed"
    [(_, _, outcome, _)] = handoffs
    assert outcome["error_code"] == "worker_lost" and "stopped 2 times" in outcome["error_message"]
    assert not [e for e in stream.decode(stream.since(redis_db, "gen-7")) if e["type"] == "draft"]


def test_a_redelivery_takes_over_at_once_from_a_worker_process_on_this_host_that_is_gone(redis_db, test_backend,
                                                                                          handoffs):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that no longer runs, as a killed child's
    lifecycle.claim(redis_db, "gen-8", f"{socket.gethostname()}:{gone.pid}:abcd")
    assert tasks.generate_page("gen-8", {"question": "What is sound?"}) == "done"
    retry = next(e for e in stream.decode(stream.since(redis_db, "gen-8")) if e["type"] == "retry")
    assert retry["attempt"] == 2


def test_a_claim_held_by_a_live_process_is_not_taken_over(redis_db, test_backend, handoffs):
    from celery.exceptions import Retry

    lifecycle.claim(redis_db, "gen-9", f"{socket.gethostname()}:1:abcd")  # pid 1 always runs
    with pytest.raises(Retry):
        tasks.generate_page("gen-9", {"question": "What is sound?"})


def test_a_retry_in_the_same_process_takes_back_the_claim_it_could_not_release(redis_db, test_backend, handoffs):
    lifecycle.claim(redis_db, "gen-10", f"{socket.gethostname()}:{os.getpid()}:old")  # Redis was away at release
    assert tasks.generate_page("gen-10", {"question": "What is sound?"}) == "done"


def test_a_claim_another_thread_of_this_process_holds_is_not_taken_back(redis_db, test_backend, handoffs):
    from celery.exceptions import Retry

    token = f"{socket.gethostname()}:{os.getpid()}:busy"  # a page this worker is writing on another thread
    lifecycle.claim(redis_db, "gen-11", token)
    with claim.Claim(redis_db, "gen-11", token), pytest.raises(Retry):
        tasks.generate_page("gen-11", {"question": "What is sound?"})

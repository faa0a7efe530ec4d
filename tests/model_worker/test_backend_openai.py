"""The `openai` backend: streamed chat completions from a real `transformers serve` on a tiny local model,
and every way a server can fail, each a clear error code."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from model_worker.backends.openai import OpenAIBackend
from model_worker.config import engine_settings, load_backend
from model_worker.contract.pages import PageRequest, RepairNote
from model_worker.worker.run import run_page
from tests.support.chat_server import ChatServer
from tests.support.net import free_port, listening

QUESTION = PageRequest(question="Why is the sky blue?", topic="atom")


class ListSink:
    def __init__(self, stop_after_blocks: int | None = None):
        self.commits, self.stop_after_blocks = [], stop_after_blocks

    def on_draft(self, block, pieces):
        raise AssertionError("a chat server streams tokens, not drafts")

    def on_commit(self, block, text, tokens):
        self.commits.append((block, text, tokens))

    def should_stop(self):
        return self.stop_after_blocks is not None and len(self.commits) >= self.stop_after_blocks


@pytest.fixture(scope="module")
def served(tiny_qwen_dir, tmp_path_factory):
    """`transformers serve` on the tiny Qwen3.5 folder, on a free loopback port; its API root."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    serve = Path(sys.executable).parent / "transformers"
    proc = subprocess.Popen([str(serve), "serve", str(tiny_qwen_dir), "--host", "127.0.0.1", "--port", str(port),
                             "--device", "cpu"], stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not listening("127.0.0.1", port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"transformers serve did not come up:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_transformers_serve_streams_the_reply_with_its_token_count(served):
    backend = load_backend(engine_settings({"MODEL_BACKEND": "openai", "MODEL_BASE_URL": served,
                                            "MODEL_MAX_NEW_TOKENS": "24"}))
    assert isinstance(backend, OpenAIBackend)
    sink = ListSink()
    outcome = run_page(backend, QUESTION, sink)
    # Random weights write no page: the reply streamed, was counted, and is refused as no page.
    assert (outcome.status, outcome.error_code) == ("failed", "bad_reply"), outcome
    assert sink.commits and [b for b, _, _ in sink.commits] == list(range(len(sink.commits)))
    assert outcome.stats["tokens"] == 24  # the server's own count (usage)
    assert outcome.stats["tokens_per_s"] > 0 and outcome.stats["seconds"] > 0


def test_a_cancel_closes_the_stream_of_transformers_serve(served):
    backend = OpenAIBackend(served, max_new_tokens=400)
    sink = ListSink(stop_after_blocks=1)
    outcome = run_page(backend, QUESTION, sink)
    assert outcome.status == "cancelled" and len(sink.commits) == 1


def test_a_page_in_prose_and_code_fences_is_taken_out_with_the_server_token_count():
    with ChatServer("page") as server:
        outcome = run_page(OpenAIBackend(server.base_url, "m", api_key="sekrit"), QUESTION, ListSink())
    assert outcome.status == "done", outcome
    assert outcome.html.startswith("<!doctype html>") and outcome.html.rstrip().endswith("</html>")
    assert "Enjoy" not in outcome.html and outcome.stats["tokens"] == 42
    request = server.requests[0]
    assert request["auth"] == "Bearer sekrit" and request["body"]["stream"] is True
    assert request["body"]["messages"][0]["role"] == "system" and request["body"]["temperature"] == 0


def test_a_repair_sends_the_failing_page_and_its_errors_and_samples():
    repair = RepairNote(page="<!doctype html><html>broken</html>", errors=("errors: x is not defined",), attempt=2)
    with ChatServer("page") as server:
        run_page(OpenAIBackend(server.base_url, "m"), PageRequest(question="Why?", repair=repair), ListSink())
    body = server.requests[0]["body"]
    assert "x is not defined" in body["messages"][-1]["content"] and "broken" in body["messages"][-1]["content"]
    assert body["temperature"] > 0 and body["seed"] == 2


@pytest.mark.parametrize(("mode", "code", "words"), [
    ("unauthorized", "model_unavailable", "refused the API key (401)"),
    ("server_error", "model_unavailable", "failed (503)"),
    ("malformed", "bad_reply", "not JSON"),
    ("prose", "bad_reply", "no html page"),
])
def test_a_failing_server_or_reply_is_a_clear_error(mode, code, words):
    with ChatServer(mode) as server:
        outcome = run_page(OpenAIBackend(server.base_url, "m"), QUESTION, ListSink())
    assert (outcome.status, outcome.error_code) == ("failed", code)
    assert words in outcome.error_message
    assert len(server.requests) == 1  # an answer, even a refusal, is never retried


def test_a_prompt_too_long_for_the_server_s_context_is_sent_again_without_the_worked_example():
    with ChatServer("short_context") as server:
        outcome = run_page(OpenAIBackend(server.base_url, "m"), QUESTION, ListSink())
    assert outcome.status == "done", outcome
    with_example, without = (r["body"]["messages"] for r in server.requests)
    assert len(with_example) > 3 and len(without) == 2  # the system message and the question
    assert without[-1] == with_example[-1]


def test_a_prompt_too_long_even_without_the_example_is_prompt_too_long():
    with ChatServer("no_context") as server:
        outcome = run_page(OpenAIBackend(server.base_url, "m"), QUESTION, ListSink())
    assert (outcome.status, outcome.error_code) == ("failed", "prompt_too_long")
    assert "maximum context length is 4096" in outcome.error_message and len(server.requests) == 2


def test_a_server_that_is_down_is_retried_then_reported_unavailable():
    port = free_port()
    backend = OpenAIBackend(f"http://127.0.0.1:{port}/v1", "m", retries=1)
    started = time.monotonic()
    outcome = run_page(backend, QUESTION, ListSink())
    assert (outcome.error_code, "cannot be reached") == ("model_unavailable", "cannot be reached")
    assert f"127.0.0.1:{port}" in outcome.error_message and time.monotonic() - started < 10


def test_a_server_that_stalls_mid_reply_times_out_as_unavailable():
    with ChatServer("stall", stall_s=3) as server:
        outcome = run_page(OpenAIBackend(server.base_url, "m", read_timeout_s=0.5), QUESTION, ListSink())
    assert outcome.error_code == "model_unavailable" and "sent nothing for 0.5 s" in outcome.error_message


def test_a_cancel_closes_the_connection_the_server_writes_to():
    with ChatServer("endless") as server:
        outcome = run_page(OpenAIBackend(server.base_url, "m"), QUESTION, ListSink(stop_after_blocks=1))
        assert outcome.status == "cancelled"
        assert server.closed_early.wait(5)


def test_a_base_url_that_is_no_url_is_refused_at_load():
    with pytest.raises(ValueError, match="MODEL_BASE_URL"):
        OpenAIBackend("localhost:8000", "m")


def test_a_429_waits_as_long_as_retry_after_asks_within_a_bound():
    from model_worker.backends.openai import RATE_LIMIT_WAIT_S, _retry_after

    assert _retry_after("2", 0.5) == 2.0
    assert _retry_after("3600", 0.5) == RATE_LIMIT_WAIT_S
    assert _retry_after("Wed, 21 Oct 2026 07:28:00 GMT", 0.5) == 0.5 and _retry_after(None, 1.0) == 1.0


def test_a_recorded_capable_model_s_page_comes_through_with_the_server_s_usage():
    from tests.support.recorded_model import RecordedModel

    with RecordedModel() as server:
        request = PageRequest(question="What causes the northern lights?", topic="seasons-axial-tilt")
        outcome = run_page(OpenAIBackend(server.base_url, "m"), request, ListSink())
    assert outcome.status == "done" and "<title>What causes the northern lights?</title>" in outcome.html
    assert server.requests[0]["kind"] == "ask" and outcome.stats["tokens"] > 2500

"""The second opinion: the `openai` backend asks the recorded model, in one short call, whether a lesson answers a
question, and reads yes, no or, for anything else (a slow, failing or rambling server), unknown."""

from __future__ import annotations

import time

import pytest

from model_worker.backends.openai import OpenAIBackend
from model_worker.backends.second_opinion import INSTRUCTION, MAX_TOKENS, verdict_from_reply
from model_worker.contract.pages import LessonQuestion
from model_worker.worker.run import judge_lesson
from tests.support.net import free_port
from tests.support.recorded_model import MODEL, RecordedModel

SOUND = dict(title="How sound travels", intro="Sound is a wave of squeezed and stretched air.")


@pytest.fixture(scope="module")
def recorded():
    with RecordedModel(stall_s=3) as server:
        yield server


def ask(question: str, lang: str = "en") -> LessonQuestion:
    return LessonQuestion(question=question, lang=lang, **SOUND)


@pytest.mark.parametrize("question, verdict", [
    ("Why do we see lightning before thunder?", "yes"),
    ("Why does the sky glow green near the poles at night?", "no"),
    ("台风是怎么形成的？", "no"),
    ("judge: rambles", "unknown"),
    ("A question nobody recorded a verdict for?", "unknown"),
])
def test_the_model_s_one_word_reply_is_the_verdict(recorded, question, verdict):
    backend = OpenAIBackend(recorded.base_url, MODEL)
    assert backend.judge(ask(question), timeout_s=2) == verdict
    body = recorded.requests[-1]["body"]
    assert (body["max_tokens"], body["temperature"], body["stream"]) == (MAX_TOKENS, 0.0, False)
    prompt = body["messages"][-1]["content"]
    assert "How sound travels" in prompt and "squeezed and stretched air" in prompt and prompt.endswith(INSTRUCTION)


def test_without_a_model_name_the_server_s_first_model_is_asked(recorded):
    assert OpenAIBackend(recorded.base_url).judge(ask("Why do we see lightning before thunder?"), timeout_s=2) == "yes"
    assert recorded.requests[-1]["body"]["model"] == MODEL


def test_a_slow_model_is_no_opinion_within_the_timeout(recorded):
    backend = OpenAIBackend(recorded.base_url, MODEL)
    started = time.monotonic()
    assert judge_lesson(backend, ask("judge: slow"), timeout_s=1) == "unknown"
    assert time.monotonic() - started < 2.5


def test_a_server_that_is_down_or_refuses_is_no_opinion_at_once():
    down = OpenAIBackend(f"http://127.0.0.1:{free_port()}/v1", MODEL)
    started = time.monotonic()
    assert judge_lesson(down, ask("Why do we see lightning before thunder?"), timeout_s=1) == "unknown"
    assert time.monotonic() - started < 1.5  # no retries, no backoff: the learner is waiting


def test_a_backend_that_gives_no_opinion_or_fails_giving_one_is_unknown():
    class Demo:  # as the clover backend: no `judge`
        pass

    class Broken:
        def judge(self, ask, *, timeout_s):
            raise RuntimeError("out of memory")

    class Odd:
        def judge(self, ask, *, timeout_s):
            return "maybe"

    for backend in (Demo(), Broken(), Odd()):
        assert judge_lesson(backend, ask("Why do we see lightning before thunder?"), timeout_s=1) == "unknown"


@pytest.mark.parametrize("reply, verdict", [
    ("Yes", "yes"), ("yes.", "yes"), (" NO", "no"), ("No, it", "no"), ("是", "yes"), ("不是", "no"), ("否", "no"),
    ("", "unknown"), ("Maybe", "unknown"), ("<think>", "unknown"), ("Yesterday", "unknown"),
])
def test_a_reply_is_read_by_its_first_word(reply, verdict):
    assert verdict_from_reply(reply) == verdict

"""A new question the router is unsure of, asked with a served model (the recorded one): the model's second opinion
on the lesson decides whether the page is grounded on it, is recorded with the question, and never holds the
question up for longer than SECOND_OPINION_TIMEOUT_S. The demo backend, a follow-up and SECOND_OPINION=0 ask
nothing."""

from __future__ import annotations

import time

import pytest

from explainer.services.asking import generation_create
from tests.support.recorded_model import MODEL, RecordedModel

pytestmark = pytest.mark.django_db

LIGHTNING = "Why do we see lightning before thunder?"  # routed to the page on sound, just above the threshold


@pytest.fixture(scope="module")
def recorded():
    with RecordedModel(stall_s=4) as server:
        yield server


@pytest.fixture(autouse=True)
def served_model(settings, monkeypatch, recorded):
    """The web tier configured for the recorded model, as the workers would be."""
    settings.MODEL_BACKEND = "openai"
    monkeypatch.setenv("MODEL_BASE_URL", recorded.base_url)
    monkeypatch.setenv("MODEL_NAME", MODEL)


def judged(recorded) -> list[str]:
    return [r["question"] for r in recorded.requests if r["kind"] == "judge"]


def test_a_yes_grounds_the_page_on_the_lesson_and_is_recorded(recorded, session_key):
    before = len(judged(recorded))
    generation = generation_create(question=LIGHTNING, session_key=session_key)
    assert judged(recorded)[before:] == [LIGHTNING]
    assert (generation.second_opinion, generation.second_opinion_lesson) == ("yes", "sound")
    assert generation.thread.topic_slug == "sound"


def test_a_no_leaves_the_lesson_out_of_the_thread(recorded, session_key):
    generation = generation_create(question="Why does the sky glow green near the poles at night?",
                                   session_key=session_key)
    assert (generation.second_opinion, generation.second_opinion_lesson) == ("no", "sky-blue")
    assert generation.thread.topic_slug == ""


def test_a_slow_model_holds_the_question_no_longer_than_the_timeout_and_the_router_s_choice_stands(
        recorded, session_key, settings):
    settings.SECOND_OPINION_TIMEOUT_S = 1
    started = time.monotonic()
    generation = generation_create(question="How does a rocket work in space?", session_key=session_key)
    assert time.monotonic() - started < 3
    assert generation.second_opinion == "unknown" and generation.thread.topic_slug == generation.second_opinion_lesson
    assert generation.second_opinion_lesson


def test_a_model_server_that_is_down_is_no_opinion_and_the_question_goes_ahead(recorded, session_key):
    recorded.pause()
    try:
        generation = generation_create(question=LIGHTNING, session_key=session_key)
    finally:
        recorded.resume()
    assert (generation.second_opinion, generation.thread.topic_slug) == ("unknown", "sound")


def test_a_sure_route_a_follow_up_and_second_opinion_off_ask_nothing(recorded, session_key, settings):
    before = len(judged(recorded))
    sure = generation_create(question="Why is the sky blue?", session_key=session_key)
    generation_create(question="make it sunset", session_key=session_key, thread_id=sure.thread_id)
    settings.SECOND_OPINION = False
    off = generation_create(question=LIGHTNING, session_key=session_key)
    assert judged(recorded)[before:] == []
    assert (sure.second_opinion, off.second_opinion, off.thread.topic_slug) == ("", "", "sound")


def test_the_demo_backend_asks_nothing(recorded, session_key, settings):
    settings.MODEL_BACKEND = "clover"
    before = len(judged(recorded))
    generation = generation_create(question=LIGHTNING, session_key=session_key)
    assert judged(recorded)[before:] == []
    assert (generation.second_opinion, generation.thread.topic_slug) == ("", "sound")

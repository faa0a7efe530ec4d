"""A capable model through the whole app: the `openai` backend in a real GPU worker against the recorded
model (`tests/support/recorded_model.py`), real finish and qa workers (Chromium), over the websocket. New
questions in and outside the library in English and Chinese, a follow-up, a repair, and each provider
fault: a clear `error` code, a message a learner understands, nothing left active."""

from __future__ import annotations

import asyncio
import time

import pytest
from channels.db import database_sync_to_async

from explainer.models import Generation
from tests.support import sockets
from tests.support.recorded_model import RecordedModel
from tests.support.sockets import generation_row

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.usefixtures("celery_workers")]

TIMEOUT = 120
MAX_NEW_TOKENS = 8000  # a recorded page is 3,000 to 4,000 tokens; `fault: too long` writes 12,000
ANY = object()
LEARNER_WORDS = {"model_unavailable": "not answering right now", "bad_reply": "not a complete page"}


@pytest.fixture(scope="module")
def recorded():
    with RecordedModel(stall_s=8) as server:
        yield server


@pytest.fixture(scope="module")
def worker_env(recorded) -> dict:
    return {"MODEL_BACKEND": "openai", "MODEL_BASE_URL": recorded.base_url, "MODEL_NAME": "recorded-capable-model",
            "MODEL_MAX_NEW_TOKENS": str(MAX_NEW_TOKENS), "MODEL_TIMEOUT_S": "3", "REPAIR_ATTEMPTS": "1"}


@pytest.fixture(scope="module", autouse=True)
def router_loaded(django_db_setup, django_db_blocker):
    """The router's index built before the first question: built on the consumer's one database thread, on a
    busy machine, it would hold every socket up past the timeout. (It reads the learned routes.)"""
    from explainer.selectors.library import library_index

    with django_db_blocker.unblock():
        library_index()


@pytest.fixture(autouse=True)
def web_tier_backend(settings):
    """The web tier plans with the backend the workers run: an open-domain one writes every question."""
    settings.MODEL_BACKEND = "openai"


async def receive_until(ws, types: set[str], seen: list[dict]) -> dict:
    return await sockets.receive_until(ws, types, seen, timeout=TIMEOUT)


async def ask_until_checked(ws, question: str, **fields) -> list[dict]:
    """Ask, then follow the generation (and any repair) until its last `qa` or an `error`."""
    await ws.send_json_to({"type": "ask", "question": question, **fields})
    seen: list[dict] = []
    while True:
        try:
            event = await receive_until(ws, {"qa", "error"}, seen)
        except TimeoutError:
            raise AssertionError(f"no qa or error in {TIMEOUT} s after {[e['type'] for e in seen]}") from None
        if event["type"] == "error" or not event.get("repair"):
            return seen


@database_sync_to_async
def active_generations() -> int:
    return Generation.objects.filter(status__in=[Generation.Status.QUEUED, Generation.Status.RUNNING]).count()


@pytest.mark.browser
@pytest.mark.parametrize("question, lang, slug, title", [
    ("Why do some volcanoes explode while others just let lava flow out?", "en", "volcanoes", "How volcanoes erupt"),
    ("火山是怎样喷发的？", "zh", "zh-volcanoes", "火山是怎样喷发的"),
    ("What causes the northern lights?", "en", ANY, "What causes the northern lights?"),  # the router picks seasons
    ("台风是怎么形成的？", "zh", None, "台风是怎么形成的？"),
])
async def test_a_capable_model_s_page_is_streamed_stored_and_passes_its_render_check(connect, recorded, question,
                                                                                    lang, slug, title):
    ws = await connect()
    seen = await ask_until_checked(ws, question)
    topic = next(e for e in seen if e["type"] == "topic")
    assert (topic["lang"], topic["source"]) == (lang, "model") and slug in (ANY, topic["slug"])
    done, qa = next(e for e in seen if e["type"] == "done"), seen[-1]
    assert (qa["type"], qa["passed"], qa["version"]) == ("qa", True, 1), qa.get("summary")
    assert {c["name"] for c in qa["checks"] if c["passed"]} >= {"accessible", "canvas"}
    assert done["stats"]["tokens"] > 2000 and "commit" in [e["type"] for e in seen]
    row = await generation_row(done["generation"])
    assert f"<title>{title}</title>" in (await database_sync_to_async(lambda: row.page.html)())
    request = recorded.requests[-1]
    assert request["question"] == question and request["body"]["messages"][0]["role"] == "system"


@pytest.mark.browser
async def test_a_follow_up_revises_the_page_into_version_2(connect, recorded):
    ws = await connect()
    first = await ask_until_checked(ws, "Why do some volcanoes explode while others just let lava flow out?")
    thread = first[0]["thread"]
    seen = await ask_until_checked(ws, "make the magma runnier and show it at night", thread=thread)
    assert recorded.requests[-1]["kind"] == "follow_up"
    assert "Silica in the magma" in recorded.requests[-1]["body"]["messages"][-1]["content"]  # the page revised
    done, qa = next(e for e in seen if e["type"] == "done"), seen[-1]
    assert (done["thread"], done["version"]) == (thread, 2)
    assert (qa["type"], qa["passed"]) == ("qa", True), qa.get("summary")


@pytest.mark.browser
async def test_a_page_with_a_runtime_error_is_repaired_by_the_model(connect, recorded):
    ws = await connect()
    seen = await ask_until_checked(ws, "What makes the aurora glow green?")
    fixing = [e for e in seen if e["type"] == "fixing"]
    assert len(fixing) == 1 and any("magnetosphere" in error for error in fixing[0]["errors"])
    assert recorded.requests[-1]["kind"] == "repair"
    qa = seen[-1]
    assert (qa["type"], qa["passed"], qa["version"]) == ("qa", True, 2), qa.get("summary")


@pytest.mark.parametrize("question, code, words", [
    ("fault: refused key", "model_unavailable", "refused the API key (401)"),
    ("fault: unknown model", "model_unavailable", "does not serve the model 'recorded-capable-model' (404)"),
    ("fault: rate limited", "model_unavailable", "still rate-limiting after 2 waits (429)"),
    ("fault: server error", "model_unavailable", "failed (500)"),
    ("fault: stream breaks", "model_unavailable", "broke off the reply"),
    ("fault: stall", "model_unavailable", "sent nothing for 3 s"),
    ("fault: too long", "bad_reply", f"limit of {MAX_NEW_TOKENS} tokens (MODEL_MAX_NEW_TOKENS)"),
    ("Why is the aurora sometimes red?", "bad_reply", "no closing </html>"),
    ("Can you explain the aurora in words only?", "bad_reply", "held no html page"),
])
async def test_a_provider_fault_ends_in_a_clear_error_and_leaves_nothing_active(connect, question, code, words):
    ws = await connect()
    started = time.monotonic()
    seen = await ask_until_checked(ws, question)
    end = seen[-1]
    assert (end["type"], end["code"]) == ("error", code), end
    assert LEARNER_WORDS[code] in end["message"] and words in end["message"], end["message"]
    assert (await generation_row(end["generation"])).status == Generation.Status.FAILED
    assert await active_generations() == 0
    if "rate limited" in question:  # two waits of the 1 s Retry-After, then the error
        assert time.monotonic() - started >= 2


async def test_a_429_is_waited_out_and_asked_again(connect, recorded):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "fault: rate limited once"})
    seen: list[dict] = []
    end = await receive_until(ws, {"done", "error"}, seen)
    assert end["type"] == "done", end
    assert [r["question"] for r in recorded.requests[-2:]] == ["fault: rate limited once"] * 2


async def test_a_model_server_that_refuses_connections_is_a_clear_error(connect, recorded):
    recorded.pause()
    try:
        ws = await connect()
        await ws.send_json_to({"type": "ask", "question": "What causes the northern lights?"})
        seen: list[dict] = []
        end = await receive_until(ws, {"done", "error"}, seen)
    finally:
        recorded.resume()
    assert (end["type"], end["code"]) == ("error", "model_unavailable")
    assert "not answering right now" in end["message"] and "cannot be reached" in end["message"]
    assert await active_generations() == 0


async def test_stop_mid_stream_closes_the_upstream_request(connect, recorded):
    recorded.closed_early.clear()
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "fault: slow"})
    seen: list[dict] = []
    await receive_until(ws, {"commit"}, seen)
    await ws.send_json_to({"type": "cancel", "generation": seen[0]["generation"]})
    end = await receive_until(ws, {"error", "done"}, seen)
    assert (end["type"], end["code"]) == ("error", "cancelled")
    assert await asyncio.to_thread(recorded.closed_early.wait, 10)
    assert await active_generations() == 0


@pytest.mark.browser
async def test_a_lesson_the_model_says_does_not_answer_an_unsure_question_is_left_out_and_the_teacher_sees_why(
        connect, recorded, monkeypatch, django_user_model):
    """Routed to the sky's colour just above the threshold, the question is put to the model first; its "no" writes
    the page for the question alone, with no related lesson, and the teacher's page view says so."""
    from django.test import Client
    from django.urls import reverse

    from explainer.models import PageVersion
    from explainer.services.classrooms import classroom_create

    monkeypatch.setenv("MODEL_BASE_URL", recorded.base_url)  # the web tier asks the same server the workers use
    monkeypatch.setenv("MODEL_NAME", "recorded-capable-model")
    question = "Why does the sky glow green near the poles at night?"
    ws = await connect()
    seen = await ask_until_checked(ws, question)
    judged = [r for r in recorded.requests if r["kind"] == "judge" and r["question"] == question]
    assert len(judged) == 1 and "Lesson: Why the sky is blue" in judged[0]["body"]["messages"][-1]["content"]
    topic = next(e for e in seen if e["type"] == "topic")
    assert (topic["slug"], topic.get("related"), topic["answers"]) == (None, None, question)
    assert "sky-blue" not in [n["slug"] for n in topic["nearest"]]
    page_request = recorded.requests[-1]
    assert page_request["question"] == question and len(page_request["body"]["messages"]) == 2  # no worked example
    qa = seen[-1]
    assert (qa["type"], qa["passed"]) == ("qa", True), qa.get("summary")
    row = await generation_row(qa["generation"])
    assert (row.second_opinion, row.second_opinion_lesson) == ("no", "sky-blue")

    def teacher_page_view() -> str:
        teacher = django_user_model.objects.create_user(username="ada", password="pw-ada-123")
        classroom = classroom_create(teacher=teacher, name="Year 7 science")
        page = PageVersion.objects.select_related("thread").get(generation_id=row.pk)
        page.thread.classroom = classroom
        page.thread.save(update_fields=["classroom"])
        client = Client()
        client.force_login(teacher)
        return client.get(reverse("teacher:page", args=[page.pk])).content.decode()

    html = await database_sync_to_async(teacher_page_view)()
    assert "Second opinion" in html and "the model said it does not, so the page was written without it" in html

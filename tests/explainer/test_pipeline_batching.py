"""Continuous batching through the whole pipeline: a real GPU worker started as runall starts it with
MODEL_BATCH=2 (a thread pool of one process) writes two learners' pages with the demo checkpoint in
shared rounds, each page whole and on its topic."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from explainer.models import Generation
from tests.support import sockets
from tests.support.sockets import generation_row

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.usefixtures("celery_workers")]

TIMEOUT = 240  # two whole demo pages on a busy 2-core machine
# Topics the demo checkpoint writes itself (its `writable_pages`), asked in words that route there clearly.
QUESTIONS = {"pendulum-period": "How does a pendulum swing?", "tides": "What makes the tides come in and go out?"}


@pytest.fixture(scope="module")
def worker_env() -> dict:
    return {"MODEL_BACKEND": "clover", "MODEL_DEVICE": "cpu", "MODEL_BATCH": "2", "MODEL_THREADS": "1"}


@database_sync_to_async
def another_session() -> str:
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session.create()
    return session.session_key


async def ask(ws, question: str) -> tuple[dict, list[dict]]:
    await ws.send_json_to({"type": "ask", "question": question})
    seen: list[dict] = []
    end = await sockets.receive_until(ws, {"done", "error"}, seen, timeout=TIMEOUT)
    return end, seen


async def test_two_learners_pages_share_the_workers_rounds_and_each_is_whole(connect):
    sockets_ = [await connect(), await connect(await another_session())]
    results = await asyncio.gather(*(ask(ws, q) for ws, q in zip(sockets_, QUESTIONS.values(), strict=True)))
    for (end, seen), topic in zip(results, QUESTIONS, strict=True):
        assert end["type"] == "done", end
        assert next(e for e in seen if e["type"] == "topic")["slug"] == topic
        assert end["stats"]["batch"] == 2  # it shared rounds with the other learner's page
        row = await generation_row(end["generation"])
        assert row.status == Generation.Status.DONE and row.stats["tokens"] > 500

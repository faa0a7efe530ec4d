"""A real qa worker picks up `explainer.render_check`, stores the verdict and tells the learner."""

from __future__ import annotations

import time

import pytest

from explainer.celery import app
from explainer.models import Generation, PageVersion, RenderCheck, Thread
from model_worker.contract import stream

from .pages import kit_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("celery_workers")]


def test_the_qa_worker_checks_a_page_and_sends_the_qa_event(redis_db):
    thread = Thread.objects.create()
    generation = Generation.objects.create(thread=thread, question="Why do we have day and night?")
    page = PageVersion.objects.create(thread=thread, generation=generation, version=1, html=kit_page())

    app.send_task("explainer.render_check", args=[page.pk], queue="qa")
    qa = []
    deadline = time.monotonic() + 150  # a cold worker starts Chromium first
    while not qa and time.monotonic() < deadline:
        qa = [e for e in stream.decode(stream.since(redis_db, str(generation.pk))) if e["type"] == "qa"]
        time.sleep(0.5)

    assert qa, "no qa event from the worker"
    assert qa[0]["passed"] is True, qa[0]["summary"]
    check = RenderCheck.objects.get(page=page)
    assert check.status == RenderCheck.Status.PASSED
    assert bytes(check.thumbnail).startswith(b"\x89PNG")

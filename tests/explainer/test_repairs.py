"""Bounded repair: a page that fails its render check is asked for again with the check's errors, at most
REPAIR_ATTEMPTS times; a failing page never becomes the version a follow-up revises."""

from __future__ import annotations

import pytest

from explainer.models import Generation, PageVersion, RenderCheck
from explainer.render_check.report import RenderReport
from explainer.selectors.generation import thread_current_page
from explainer.services.asking import generation_create
from explainer.services.finishing import generation_finish
from explainer.services.render_checks import render_check_record
from model_worker.contract import stream
from model_worker.contract.pages import PageOutcome, PageRequest
from tests.support.queues import gpu_requests

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture(autouse=True)
def two_repairs(settings):
    settings.REPAIR_ATTEMPTS = 2


@pytest.fixture
def run(django_capture_on_commit_callbacks):
    def call(fn, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(**kwargs)
    return call


def page_of(run, generation, html="<!doctype html><html><body>page</body></html>") -> PageVersion:
    run(generation_finish, generation_id=generation.pk, outcome=PageOutcome(status="done", html=html))
    return PageVersion.objects.get(generation=generation)


def check(run, page, passed: bool) -> RenderCheck:
    report = RenderReport(url="http://x/")
    report.add("ready", True, "ready in 0.2 s")
    report.add("errors", passed, "none" if passed else "1 page error")
    if not passed:
        report.page_errors.append("ReferenceError: notDefinedAnywhere is not defined")
    row = RenderCheck.objects.create(page=page)
    return run(render_check_record, check=row, report=report)


def test_a_failed_check_queues_a_repair_carrying_the_page_and_its_errors_and_says_fixing_before_qa(run, redis_db):
    asked = run(generation_create, question="Why is the sky blue?", session_key="s1")
    page = page_of(run, asked)
    check(run, page, passed=False)

    repair = Generation.objects.get(kind=Generation.Kind.REPAIR)
    assert (repair.thread_id, repair.question, repair.status) == (asked.thread_id, asked.question, "queued")
    generation_id, request = gpu_requests(redis_db)[-1]
    assert generation_id == str(repair.pk)
    note = PageRequest.from_dict(request).repair
    assert note.attempt == 1 and note.page == page.html
    assert "errors: 1 page error" in note.errors
    assert "page error: ReferenceError: notDefinedAnywhere is not defined" in note.errors
    sent = stream.decode(stream.since(redis_db, str(asked.pk)))
    types = [e["type"] for e in sent]
    assert types.index("fixing") < types.index("qa")
    fixing = sent[types.index("fixing")]
    assert (fixing["repair"], fixing["attempt"], fixing["attempts"], fixing["version"]) == (str(repair.pk), 1, 2, 1)
    assert sent[types.index("qa")]["repair"] == str(repair.pk)
    assert stream.decode(stream.since(redis_db, str(repair.pk)))[0]["type"] == "queued"


def test_repairs_stop_after_the_allowed_attempts_and_the_last_page_keeps_its_warning(run, redis_db, settings):
    settings.REPAIR_ATTEMPTS = 2
    generation = run(generation_create, question="How do tides work?", session_key="s1")
    for attempt in (1, 2, 3):
        check(run, page_of(run, generation), passed=False)
        repairs = Generation.objects.filter(kind=Generation.Kind.REPAIR).order_by("created_at")
        if attempt <= 2:
            generation = repairs.last()
            assert repairs.count() == attempt
            assert PageRequest.from_dict(gpu_requests(redis_db)[-1][1]).repair.attempt == attempt
    assert Generation.objects.filter(kind=Generation.Kind.REPAIR).count() == 2
    last = stream.decode(stream.since(redis_db, str(generation.pk)))
    assert [e["type"] for e in last][-1] == "qa" and last[-1]["passed"] is False and last[-1]["repair"] is None


def test_a_passing_check_asks_for_no_repair(run, redis_db):
    generation = run(generation_create, question="What is friction?", session_key="s1")
    check(run, page_of(run, generation), passed=True)
    assert not Generation.objects.filter(kind=Generation.Kind.REPAIR).exists()


def test_a_failing_revision_never_becomes_the_page_a_follow_up_revises(run, redis_db, settings):
    settings.REPAIR_ATTEMPTS = 0
    first = run(generation_create, question="How do neurons fire?", session_key="s1")
    good = page_of(run, first, "<!doctype html><html><body>neuron v1</body></html>")
    check(run, good, passed=True)
    second = run(generation_create, question="Make the signal slower", session_key="s1", thread_id=first.thread_id)
    bad = page_of(run, second, "<!doctype html><html><body>broken v2</body></html>")
    check(run, bad, passed=False)
    assert thread_current_page(thread=first.thread) == good
    run(generation_create, question="Add a label for the myelin sheath", session_key="s1", thread_id=first.thread_id)
    assert gpu_requests(redis_db)[-1][1]["previous_page"] == good.html


def test_a_backend_that_cannot_revise_pages_answers_a_follow_up_as_a_new_question(run, redis_db, settings):
    settings.MODEL_BACKEND = "clover"  # the demo checkpoint declares revises_pages=False
    first = run(generation_create, question="How do neurons fire?", session_key="s1")
    check(run, page_of(run, first), passed=True)
    follow = run(generation_create, question="Make the signal slower", session_key="s1", thread_id=first.thread_id)
    assert follow.thread_id == first.thread_id
    assert gpu_requests(redis_db)[-1][1]["previous_page"] is None


@pytest.mark.parametrize("question", ["Why is the sky blue?", "为什么天空是蓝色的？"])
def test_a_repair_asks_for_the_same_topic_in_the_same_language_as_the_failing_page(run, redis_db, question):
    asked = run(generation_create, question=question, session_key="s1")
    [(_, first)] = gpu_requests(redis_db)
    check(run, page_of(run, asked), passed=False)

    _, again = gpu_requests(redis_db)[-1]
    first, again = PageRequest.from_dict(first), PageRequest.from_dict(again)
    assert first.topic and again.repair is not None
    assert (again.topic, again.lang, again.question) == (first.topic, first.lang, first.question)


@pytest.mark.django_db(transaction=True)
def test_the_repair_is_routed_before_the_check_takes_the_database_write_lock(run, redis_db, monkeypatch):
    """Routing may build the library index (seconds on a busy machine); under SQLite's write lock every
    learner's question waited on it and failed with "database is locked"."""
    from django.db import connection

    from explainer.services import repairs

    in_transaction = []
    route = repairs.thread_answer_plan

    def spy(**kwargs):
        in_transaction.append(connection.in_atomic_block)
        return route(**kwargs)

    monkeypatch.setattr(repairs, "thread_answer_plan", spy)
    asked = run(generation_create, question="Why is the sky blue?", session_key="s1")
    check(run, page_of(run, asked), passed=False)
    assert in_transaction == [False]
    assert Generation.objects.get(kind=Generation.Kind.REPAIR).status == "queued"


def test_a_follow_up_never_revises_a_page_a_teacher_hid(run, redis_db):
    from explainer.services.rejection import GenerationRejected
    from explainer.services.review import page_set_hidden

    first = run(generation_create, question="How do neurons fire?", session_key="s1")
    v1 = page_of(run, first, "<!doctype html><html><body>v1</body></html>")
    second = run(generation_create, question="Make the signal slower", session_key="s1", thread_id=first.thread_id)
    v2 = page_of(run, second, "<!doctype html><html><body>v2</body></html>")
    run(page_set_hidden, page=v2, hidden=True)
    run(generation_create, question="Add the myelin sheath", session_key="s1", thread_id=first.thread_id)
    assert gpu_requests(redis_db)[-1][1]["previous_page"] == v1.html  # the newest page learners may see

    run(page_set_hidden, page=v1, hidden=True)
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="And the synapse?", session_key="s1", thread_id=first.thread_id)
    assert refused.value.code == "cannot_revise" and "hid this page" in refused.value.message

"""Generation services: what an ask or follow-up writes and enqueues, and how an outcome is recorded."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from explainer.models import Classroom, Generation, Learner, ModerationItem, PageVersion, Thread
from explainer.services.asking import generation_create
from explainer.services.finishing import generation_finish
from explainer.services.rejection import GenerationRejected
from model_worker.contract import stream
from model_worker.contract.pages import PageOutcome
from tests.support.queues import gpu_requests, gpu_waiting

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def ask(django_capture_on_commit_callbacks, **kwargs) -> Generation:
    with django_capture_on_commit_callbacks(execute=True):
        return generation_create(session_key="s1", **kwargs)


def finish(django_capture_on_commit_callbacks, generation, **outcome):
    with django_capture_on_commit_callbacks(execute=True):
        return generation_finish(generation_id=generation.pk, outcome=PageOutcome(**outcome))


def test_asking_creates_a_thread_and_a_queued_generation_and_enqueues_the_gpu_task(
    redis_db, django_capture_on_commit_callbacks
):
    generation = ask(django_capture_on_commit_callbacks, question="  Why is the sky blue?  ", lang="en")
    assert generation.status == Generation.Status.QUEUED
    assert generation.question == "Why is the sky blue?"
    assert generation.thread.session_key == "s1"
    [(task_generation, request)] = gpu_requests(redis_db)
    assert task_generation == str(generation.pk)
    assert request == {"question": "Why is the sky blue?", "lang": "en", "previous_page": None, "topic_note": None,
                       "topic": "sky-blue", "repair": None}
    [queued, topic] = stream.decode(stream.since(redis_db, str(generation.pk)))
    assert (topic["type"], topic["slug"]) == ("topic", "sky-blue")
    assert (queued["type"], queued["id"], queued["thread"]) == ("queued", 1, str(generation.thread_id))


def test_a_follow_up_prompt_holds_the_previous_page_and_the_new_question(redis_db, django_capture_on_commit_callbacks):
    first = ask(django_capture_on_commit_callbacks, question="How do tides work?")
    finish(django_capture_on_commit_callbacks, first, status="done", html="<html>tides v1</html>", stats={})
    follow = ask(django_capture_on_commit_callbacks, question="Add a second moon", thread_id=first.thread_id)
    assert follow.kind == Generation.Kind.FOLLOW_UP and follow.thread_id == first.thread_id
    _, request = gpu_requests(redis_db)[-1]
    assert request["previous_page"] == "<html>tides v1</html>"
    assert request["question"] == "Add a second moon"


@pytest.mark.parametrize(
    ("question", "code"), [("", "empty_question"), ("   ", "empty_question"), ("x" * 50_000, "question_too_long")]
)
def test_empty_or_oversized_questions_are_refused_and_write_nothing(redis_db, question, code):
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question=question, session_key="s1")
    assert refused.value.code == code
    assert (Thread.objects.count(), Generation.objects.count()) == (0, 0)
    assert gpu_waiting(redis_db) == 0


def test_another_browsers_thread_cannot_be_followed_up():
    thread = Thread.objects.create(session_key="someone-else")
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="Why?", session_key="s1", thread_id=thread.pk)
    assert refused.value.code == "unknown_thread"


def test_a_blocked_question_is_refused_with_the_class_message_and_no_generation(redis_db):
    teacher = get_user_model().objects.create_user("t", password="pw-123456789")
    classroom = Classroom.objects.create(name="7B", teacher=teacher, blocklist="volcano", blocked_message="Not here!")
    learner = Learner.objects.create(classroom=classroom, display_name="Ada")
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="How do volcano eruptions work?", session_key="s1", learner=learner)
    assert (refused.value.code, refused.value.message) == ("blocked", "Not here!")
    assert Generation.objects.count() == 0 and Thread.objects.count() == 0
    assert ModerationItem.objects.get().status == ModerationItem.Status.BLOCKED


def test_finishing_twice_stores_one_page_and_versions_count_up_in_a_thread(
    redis_db, django_capture_on_commit_callbacks
):
    first = ask(django_capture_on_commit_callbacks, question="What is light?")
    finish(django_capture_on_commit_callbacks, first, status="done", html="<html>1</html>", stats={"tokens": 3})
    finish(django_capture_on_commit_callbacks, first, status="done", html="<html>again</html>", stats={})
    second = ask(django_capture_on_commit_callbacks, question="Slower please", thread_id=first.thread_id)
    finish(django_capture_on_commit_callbacks, second, status="done", html="<html>2</html>", stats={})
    assert list(PageVersion.objects.values_list("version", "html")) == [(1, "<html>1</html>"), (2, "<html>2</html>")]
    done = [e for e in stream.decode(stream.since(redis_db, str(first.pk))) if e["type"] == "done"]
    assert len(done) == 1
    assert done[0]["version"] == 1 and done[0]["stats"] == {"tokens": 3}
    assert f"/pages/{PageVersion.objects.get(version=1).pk}/?k=" in done[0]["page_url"]
    # The render check is queued by name for the stored page.
    assert any(json.loads(m)["headers"]["task"] == "explainer.render_check" for m in redis_db.lrange("qa", 0, -1))


def test_a_follow_up_whose_page_is_the_page_it_revises_adds_no_version_and_says_so(
    redis_db, django_capture_on_commit_callbacks
):
    first = ask(django_capture_on_commit_callbacks, question="How do tides work?")
    finish(django_capture_on_commit_callbacks, first, status="done", html="<html>tides</html>", stats={"tokens": 9})
    redis_db.delete("qa")
    again = ask(django_capture_on_commit_callbacks, question="Show me spring tides", thread_id=first.thread_id)
    finish(django_capture_on_commit_callbacks, again, status="done", html="<html>tides</html>", stats={"tokens": 9})
    again.refresh_from_db()
    assert again.status == Generation.Status.DONE and again.stats == {"tokens": 9, "unchanged": True}
    assert list(PageVersion.objects.values_list("version", flat=True)) == [1]
    [done] = [e for e in stream.decode(stream.since(redis_db, str(again.pk))) if e["type"] == "done"]
    page = PageVersion.objects.get()
    assert (done["unchanged"], done["page"], done["version"]) == (True, page.pk, 1)
    assert redis_db.llen("qa") == 0  # the page it names was checked when it was written
    # A follow-up that does change the page is a new version, as before.
    other = ask(django_capture_on_commit_callbacks, question="Add the Sun", thread_id=first.thread_id)
    finish(django_capture_on_commit_callbacks, other, status="done", html="<html>tides+sun</html>", stats={})
    assert list(PageVersion.objects.values_list("version", flat=True).order_by("version")) == [1, 2]


@pytest.mark.parametrize(
    ("outcome", "status", "code"),
    [
        ({"status": "cancelled"}, Generation.Status.CANCELLED, "cancelled"),
        ({"status": "failed", "error_code": "timeout", "error_message": "Too slow."}, Generation.Status.FAILED,
         "timeout"),
        ({"status": "done", "html": "   "}, Generation.Status.FAILED, "generation_failed"),
    ],
)
def test_a_generation_that_ends_without_a_page_tells_the_learner_why(
    redis_db, django_capture_on_commit_callbacks, outcome, status, code
):
    generation = ask(django_capture_on_commit_callbacks, question="What is light?")
    finish(django_capture_on_commit_callbacks, generation, **outcome)
    generation.refresh_from_db()
    assert (generation.status, generation.error_code) == (status, code)
    assert PageVersion.objects.count() == 0
    last = stream.decode(stream.since(redis_db, str(generation.pk)))[-1]
    assert (last["type"], last["code"]) == ("error", code)
    assert last["message"]


def test_a_question_asked_while_the_broker_is_away_fails_at_once_with_a_clear_error(
    redis_db, django_capture_on_commit_callbacks, monkeypatch
):
    from kombu.exceptions import OperationalError

    from explainer.celery import app

    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(app, "send_task", broker_down)
    with pytest.raises(GenerationRejected) as refused:
        ask(django_capture_on_commit_callbacks, question="What is light?")
    assert refused.value.code == "unavailable"
    generation = Generation.objects.get()
    assert (generation.status, generation.error_code) == (Generation.Status.FAILED, "unavailable")

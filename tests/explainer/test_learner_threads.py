"""A learner's earlier questions: each one listed opens to something, and a stopped one can be asked again."""

from __future__ import annotations

import pytest
from django.urls import reverse

from explainer.models import Generation, PageVersion, Thread

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def thread_with(client, question: str, status: str, *, page: bool = False, hidden: bool = False) -> Thread:
    thread = Thread.objects.create(session_key=client.session.session_key)
    generation = Generation.objects.create(thread=thread, question=question, status=status)
    if page:
        PageVersion.objects.create(thread=thread, generation=generation, version=1, html="<p>x</p>", hidden=hidden)
    return thread


def test_only_threads_with_something_to_open_are_listed_as_earlier_questions(client):
    client.get(reverse("home"))  # the visit gives the browser its session
    thread_with(client, "Why is the sky blue?", Generation.Status.DONE, page=True)
    thread_with(client, "How do tides work?", Generation.Status.QUEUED)
    thread_with(client, "What is light?", Generation.Status.CANCELLED)
    thread_with(client, "Why do magnets stick?", Generation.Status.FAILED)
    thread_with(client, "How do volcanoes erupt?", Generation.Status.DONE, page=True, hidden=True)
    listed = [t.question for t in client.get(reverse("home")).context["recent_threads"]]
    assert listed == ["How do tides work?", "Why is the sky blue?"]


def test_a_thread_stopped_before_its_page_opens_with_its_question_ready_to_ask_again(client):
    client.get(reverse("home"))
    stopped = thread_with(client, "What is light?", Generation.Status.CANCELLED)
    body = client.get(reverse("thread", args=[stopped.pk])).content.decode()
    assert ">What is light?</textarea>" in body
    answered = thread_with(client, "Why is the sky blue?", Generation.Status.DONE, page=True)
    assert "></textarea>" in client.get(reverse("thread", args=[answered.pk])).content.decode()


def test_a_thread_that_is_not_this_browser_s_says_so_with_a_way_back(client, settings):
    settings.DEBUG = False
    response = client.get(reverse("thread", args=["2b0c8c1e-6a4e-4d38-9c43-1d5b7f0f2a11"]))
    body = response.content.decode()
    assert response.status_code == 404
    assert "This page is not here" in body and f'href="{reverse("home")}"' in body
    # ... in the interface's language.
    response = client.get(reverse("thread", args=["2b0c8c1e-6a4e-4d38-9c43-1d5b7f0f2a11"]), HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert "找不到这个页面" in response.content.decode()


def test_a_thread_whose_pages_a_teacher_hid_says_so_when_reopened(client):
    client.get(reverse("home"))
    hidden = thread_with(client, "What is light?", Generation.Status.DONE, page=True, hidden=True)
    body = client.get(reverse("thread", args=[hidden.pk])).content.decode()
    assert 'id="thread-hidden"' in body and "Your teacher hid this page." in body
    shown = thread_with(client, "Why is the sky blue?", Generation.Status.DONE, page=True)
    assert 'id="thread-hidden"' not in client.get(reverse("thread", args=[shown.pk])).content.decode()

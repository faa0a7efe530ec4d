"""Removing a learner, deleting a topic and removing a library page each ask first, with no JavaScript."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from explainer.models import LibraryPage, Topic

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture
def signed_in(client, teacher):
    client.force_login(teacher)
    return client


def confirm_form(body: str) -> dict:
    """The confirm page's form fields, as a browser would post them."""
    form = body.split('id="confirm"')[1].split("</form>")[0]
    assert "<script" not in body and "onsubmit" not in form
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))


def test_removing_a_learner_asks_first_and_only_the_confirmed_post_removes_them(signed_in, classroom, learner):
    url = reverse("teacher:learner", args=[classroom.pk, learner.pk])
    asked = signed_in.post(url, {"action": "remove", "display_name": "Mia"})
    assert asked.status_code == 200 and "Remove Mia?" in asked.content.decode()
    assert classroom.learners.filter(pk=learner.pk).exists()
    fields = confirm_form(asked.content.decode())
    assert fields["action"] == "remove" and fields["confirm"] == "yes"
    done = signed_in.post(url, {k: v for k, v in fields.items() if k != "csrfmiddlewaretoken"}, follow=True)
    assert not classroom.learners.on_roster().filter(pk=learner.pk).exists()
    assert "Removed Mia from the class." in done.content.decode()
    assert 'id="roster"' in done.content.decode() and "Nobody has joined yet." in done.content.decode()


def test_renaming_a_learner_needs_no_confirmation(signed_in, classroom, learner):
    signed_in.post(reverse("teacher:learner", args=[classroom.pk, learner.pk]),
                   {"action": "rename", "display_name": "Mia K"})
    learner.refresh_from_db()
    assert learner.display_name == "Mia K"
    signed_in.post(reverse("teacher:learner", args=[classroom.pk, learner.pk]),
                   {"action": "rename", "display_name": "A" * 61})  # longer than a join allows
    learner.refresh_from_db()
    assert learner.display_name == "Mia K"


def test_deleting_a_topic_asks_first(signed_in, classroom):
    topic = classroom.topics.get(title="Magnetism")
    url = reverse("teacher:topic", args=[classroom.pk, topic.pk])
    asked = signed_in.post(url, {"action": "delete"})
    assert "Delete the topic “Magnetism”?" in asked.content.decode()
    assert Topic.objects.filter(pk=topic.pk).exists()
    fields = confirm_form(asked.content.decode())
    signed_in.post(url, {k: v for k, v in fields.items() if k != "csrfmiddlewaretoken"})
    assert not Topic.objects.filter(pk=topic.pk).exists()


def test_removing_a_library_page_asks_first(signed_in, classroom):
    page = LibraryPage.objects.create(classroom=classroom, slug="yawning", topic="yawning", lang="en",
                                      title="Why we yawn", questions=["Why do we yawn?"], html="<h1>Yawn</h1>",
                                      source=LibraryPage.Source.PASTE)
    url = reverse("teacher:library-delete", args=[page.pk])
    asked = signed_in.post(url)
    assert "Remove “Why we yawn” from the library?" in asked.content.decode()
    assert LibraryPage.objects.filter(pk=page.pk).exists()
    signed_in.post(url, {"confirm": "yes"})
    assert not LibraryPage.objects.filter(pk=page.pk).exists()


def test_another_teacher_gets_404_and_no_confirm_page(client, other_teacher, classroom, learner):
    client.force_login(other_teacher)
    url = reverse("teacher:learner", args=[classroom.pk, learner.pk])
    assert client.post(url, {"action": "remove"}).status_code == 404
    assert client.post(url, {"action": "remove", "confirm": "yes"}).status_code == 404
    assert classroom.learners.filter(pk=learner.pk).exists()

"""Teachers see the topics their learners asked for that the library lacks, with counts, per class."""

from __future__ import annotations

import pytest
from django.urls import reverse

from explainer.services.asking import generation_create
from explainer.services.rejection import GenerationRejected
from tests.support.library import nearest_page

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def refused(**kwargs):
    with pytest.raises(GenerationRejected) as exc:
        generation_create(session_key="s", **kwargs)
    assert exc.value.code == "unknown_topic"


def test_requested_topics_are_counted_per_class_and_shown_only_to_its_teacher(
    client, teacher, other_teacher, classroom, learner
):
    for question in ("Why do we yawn?", "why do we yawn", "How does a refrigerator keep food cold?"):
        refused(question=question, learner=learner)
    refused(question="Why do cats purr?")  # outside any class

    client.force_login(teacher)
    page = client.get(reverse("teacher:requested-topics-class", args=[classroom.pk])).content.decode()
    rows = page.split('id="requested-topics"')[1]
    assert "Why do we yawn?" in rows or "why do we yawn" in rows
    assert '<td class="count">2</td>' in rows and '<td class="count">1</td>' in rows
    assert nearest_page("How does a refrigerator keep food cold?").title in rows  # its nearest library page
    assert "cats purr" not in rows
    everywhere = client.get(reverse("teacher:requested-topics")).content.decode()
    assert "Year 7 science" in everywhere and "cats purr" not in everywhere

    client.force_login(other_teacher)
    assert client.get(reverse("teacher:requested-topics-class", args=[classroom.pk])).status_code == 404
    assert "yawn" not in client.get(reverse("teacher:requested-topics")).content.decode()


def test_a_superuser_also_sees_questions_asked_outside_any_class(client, django_user_model):
    refused(question="Why do cats purr?")
    admin = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(admin)
    page = client.get(reverse("teacher:requested-topics")).content.decode()
    assert "Why do cats purr?" in page and "no class" in page


def requested_page(client, classroom) -> tuple[str, str]:
    """The open requests table and the answered one (empty when there is none)."""
    body = client.get(reverse("teacher:requested-topics-class", args=[classroom.pk])).content.decode()
    open_rows = body.split('id="requested-topics"')[1].split("</table>")[0]
    answered = body.split('id="answered-topics"')[1].split("</table>")[0] if 'id="answered-topics"' in body else ""
    return open_rows, answered


def test_a_requested_topic_moves_to_answered_once_the_teacher_adds_a_library_page_for_it(
    client, teacher, classroom, learner
):
    from explainer.models import LibraryPage

    for question in ("Why do we yawn?", "why do we yawn", "How does a refrigerator keep food cold?"):
        refused(question=question, learner=learner)
    client.force_login(teacher)
    open_rows, answered = requested_page(client, classroom)
    assert "yawn" in open_rows and "refrigerator" in open_rows and answered == ""

    LibraryPage.objects.create(
        classroom=classroom, slug="yawning", topic="yawning", lang="en", title="Why we yawn",
        questions=["Why do we yawn?", "What makes people yawn?"], html="<h1>Yawning</h1>",
        source=LibraryPage.Source.PASTE,
    )
    open_rows, answered = requested_page(client, classroom)
    assert "yawn" not in open_rows and "refrigerator" in open_rows
    assert "yawn" in answered and "Why we yawn" in answered and '<td class="count">2</td>' in answered
    everywhere = client.get(reverse("teacher:requested-topics")).content.decode()
    assert "yawn" not in everywhere.split('id="requested-topics"')[1].split("</table>")[0]


def test_a_requested_topic_that_a_featured_page_now_answers_shows_as_answered_by_it(
    client, teacher, classroom, learner, make_page
):
    from explainer.services.review import page_set_featured

    refused(question="Why do we yawn?", learner=learner)
    page = make_page(classroom=classroom, learner=learner, question="Why do we yawn?")
    page_set_featured(page=page, featured=True)
    client.force_login(teacher)
    open_rows, answered = requested_page(client, classroom)
    assert "yawn" not in open_rows
    assert "featured page" in answered and reverse("teacher:page", args=[page.pk]) in answered

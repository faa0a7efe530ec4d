"""Learners join a class with a code and a display name; rotating the code retires the old one."""

import pytest
from django.urls import reverse

from explainer.models import Learner

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def join(client, code, name):
    return client.post(reverse("join"), {"join_code": code, "display_name": name})


def test_joining_with_the_code_puts_the_learner_in_the_session(client, classroom):
    response = join(client, classroom.join_code, "Mia")
    assert response.status_code == 302
    learner = Learner.objects.get(classroom=classroom, display_name="Mia")
    assert client.session["learner_id"] == learner.pk
    assert client.session["classroom_id"] == classroom.pk


def test_a_code_typed_in_lower_case_with_spaces_still_works(client, classroom):
    code = classroom.join_code.lower()
    assert join(client, f" {code[:3]} {code[3:]} ", "Leo").status_code == 302
    assert classroom.learners.filter(display_name="Leo").exists()


def test_a_wrong_code_is_refused_and_nobody_joins(client, classroom):
    response = join(client, "ZZZZZZ" if classroom.join_code != "ZZZZZZ" else "YYYYYY", "Mia")
    assert response.status_code == 200
    assert "No class has that join code" in response.content.decode()
    assert "learner_id" not in client.session
    assert not Learner.objects.exists()


def test_a_name_already_taken_in_the_class_is_refused(client, classroom, learner):
    response = join(client, classroom.join_code, learner.display_name.upper())
    assert response.status_code == 200
    assert "already uses that name" in response.content.decode()
    assert classroom.learners.count() == 1


def test_after_rotating_the_code_the_old_code_fails_and_the_new_one_works(client, classroom, teacher):
    old = classroom.join_code
    client.force_login(teacher)
    client.post(reverse("teacher:class-rotate", args=[classroom.pk]))
    classroom.refresh_from_db()
    assert classroom.join_code != old
    learner_client = client.__class__()
    assert join(learner_client, old, "Mia").status_code == 200
    assert join(learner_client, classroom.join_code, "Mia").status_code == 302


def test_a_joined_learner_gets_their_class_topics_as_suggestions(client, classroom):
    join(client, classroom.join_code, "Mia")
    data = client.get(reverse("join-suggestions")).json()
    assert data["classroom"]["name"] == classroom.name
    assert data["learner"]["name"] == "Mia"
    titles = {t["title"]: t["questions"] for t in data["topics"]}
    assert titles["Magnetism"] == ["How does a magnet attract iron?", "磁铁为什么能吸铁？"]


def test_a_visitor_who_has_not_joined_gets_no_suggestions(client, classroom):
    assert client.get(reverse("join-suggestions")).json() == {"learner": None, "classroom": None, "topics": []}


def test_questions_asked_before_joining_stay_with_the_browser(client, classroom):
    from explainer.models import Thread

    client.get(reverse("join"))
    client.session.save()
    session = client.session
    session["seen"] = True
    session.save()
    before = session.session_key
    thread = Thread.objects.create(session_key=before)
    join(client, classroom.join_code, "Mia")
    thread.refresh_from_db()
    assert client.session.session_key != before
    assert thread.session_key == client.session.session_key


def test_joining_never_redirects_off_the_site(client, classroom):
    response = client.post(reverse("join"), {"join_code": classroom.join_code, "display_name": "Mia",
                                             "next": "https://evil.example.org/"})
    assert response["Location"] == "/"


def test_a_removed_learner_can_no_longer_open_or_follow_up_their_threads_in_the_class(
    client, classroom, make_page, teacher
):
    from explainer.services.asking import generation_create
    from explainer.services.classrooms import learner_remove
    from explainer.services.rejection import GenerationRejected

    join(client, classroom.join_code, "Mia")
    learner = Learner.objects.get(display_name="Mia")
    page = make_page(classroom=classroom, learner=learner, question="How does rain form?")
    page.thread.__class__.objects.filter(pk=page.thread_id).update(session_key=client.session.session_key)
    thread_url = reverse("thread", args=[page.thread_id])
    assert client.get(thread_url).status_code == 200
    assert "How does rain form?" in client.get("/").content.decode()

    learner_remove(learner=learner)

    assert client.get(thread_url).status_code == 404
    assert "How does rain form?" not in client.get("/").content.decode()
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="Make it snow", session_key=client.session.session_key,
                          thread_id=page.thread_id)
    assert refused.value.code == "unknown_thread"
    assert client.get(reverse("join-suggestions")).json()["classroom"] is None
    client.force_login(teacher)  # the teacher still reviews the page
    assert client.get(reverse("teacher:page", args=[page.pk])).status_code == 200


def test_a_removed_learner_can_join_again_under_the_same_name_as_a_new_learner(client, classroom):
    from explainer.services.classrooms import learner_remove

    join(client, classroom.join_code, "Mia")
    removed = Learner.objects.get(display_name="Mia")
    learner_remove(learner=removed)
    assert client.get(reverse("join-suggestions")).json()["learner"] is None
    assert join(client, classroom.join_code, "Mia").status_code == 302
    again = client.get(reverse("join-suggestions")).json()["learner"]
    assert again["name"] == "Mia" and again["id"] != removed.pk

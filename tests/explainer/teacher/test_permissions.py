"""A teacher sees only their own classes, a learner only their class's pages, a superuser everything."""

import pytest
from django.urls import reverse

from explainer.models import RenderCheck
from explainer.selectors.classes import learner_can_view_page
from explainer.services.classrooms import learner_join

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def class_urls(c):
    return [reverse(name, args=[c.pk]) for name in
            ("teacher:class", "teacher:review", "teacher:moderation", "teacher:usage", "teacher:usage-csv")]


def test_signed_out_visitors_are_sent_to_the_sign_in_page(client, classroom):
    for url in ["/teacher/", *class_urls(classroom)]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/teacher/login/")


def test_a_teacher_gets_404_for_another_teachers_class_and_its_reports(client, classroom, other_teacher):
    client.force_login(other_teacher)
    for url in class_urls(classroom):
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("teacher:class-rotate", args=[classroom.pk])).status_code == 404


def test_a_teacher_gets_404_for_another_classes_page_and_cannot_hide_it(client, classroom, other_teacher, make_page):
    page = make_page(classroom=classroom, check=RenderCheck.Status.PASSED)
    client.force_login(other_teacher)
    assert client.get(reverse("teacher:page", args=[page.pk])).status_code == 404
    assert client.get(reverse("teacher:page-thumbnail", args=[page.pk])).status_code == 404
    assert client.post(reverse("teacher:page-action", args=[page.pk, "hide"])).status_code == 404
    page.refresh_from_db()
    assert page.hidden is False


def test_the_dashboard_lists_only_the_teachers_own_classes(client, classroom, other_classroom, teacher):
    client.force_login(teacher)
    body = client.get("/teacher/").content.decode()
    assert classroom.name in body and classroom.join_code in body
    assert other_classroom.name not in body


def test_a_superuser_sees_every_class_and_page(client, classroom, other_classroom, make_page, django_user_model):
    admin = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    page = make_page(classroom=classroom)
    client.force_login(admin)
    body = client.get("/teacher/").content.decode()
    assert classroom.name in body and other_classroom.name in body
    assert client.get(reverse("teacher:page", args=[page.pk])).status_code == 200
    assert client.get(reverse("teacher:usage", args=[other_classroom.pk])).status_code == 200


def test_a_learner_can_view_only_visible_pages_of_their_own_class(classroom, other_classroom, learner, make_page):
    stranger = learner_join(join_code=other_classroom.join_code, display_name="Sam")
    page = make_page(classroom=classroom, learner=learner)
    assert learner_can_view_page(learner=learner, page=page)
    assert not learner_can_view_page(learner=stranger, page=page)
    assert not learner_can_view_page(learner=None, page=page)
    page.hidden = True
    assert not learner_can_view_page(learner=learner, page=page)


def test_the_admin_dashboard_summarises_each_class_and_its_waiting_items(
    client, classroom, learner, make_page, django_user_model
):
    from explainer.services.moderation import question_check

    admin = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.FAILED)
    question_check(classroom=classroom, learner=learner, question="Can a magnet stop a gun?")
    client.force_login(admin)
    response = client.get("/admin/")
    summary = {row["classroom"].pk: row for row in response.context["summary"]}
    assert {k: summary[classroom.pk][k] for k in ("learners", "pages_today", "failed_checks_today", "pending")} == {
        "learners": 1, "pages_today": 1, "failed_checks_today": 1, "pending": 1}
    assert reverse("teacher:moderation", args=[classroom.pk]) in response.content.decode()


def test_a_teacher_opens_every_screen_of_their_own_class(client, classroom, learner, teacher, make_page):
    page = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.PASSED)
    client.force_login(teacher)
    for url in [*class_urls(classroom), reverse("teacher:page", args=[page.pk])]:
        assert client.get(url).status_code == 200, url
    body = client.get(reverse("teacher:class", args=[classroom.pk])).content.decode()
    assert classroom.join_code in body and "Magnetism" in body and learner.display_name in body


def test_the_admin_neither_writes_a_page_version_by_hand_nor_edits_a_join_code(client, classroom,
                                                                                django_user_model):
    client.force_login(django_user_model.objects.create_superuser(username="root", password="pw-root-123"))
    assert client.get("/admin/explainer/pageversion/add/").status_code == 403
    change = client.get(f"/admin/explainer/classroom/{classroom.pk}/change/").content.decode()
    assert 'name="join_code"' not in change and classroom.join_code in change

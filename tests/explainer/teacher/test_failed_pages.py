"""A page that failed its render check is shown with a warning wherever it appears, also after reopening."""

import pytest
from django.urls import reverse

from explainer.models import RenderCheck

pytestmark = pytest.mark.django_db

WARNING = "This page failed its check in a browser"


def reopen(client, page):
    client.get("/")  # the browser gets its session, and the thread becomes this browser's
    page.thread.__class__.objects.filter(pk=page.thread_id).update(session_key=client.session.session_key)
    return client.get(reverse("thread", args=[page.thread_id])).content.decode()


def test_reopening_a_thread_whose_page_failed_its_check_shows_the_warning(client, classroom, learner, make_page):
    page = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.FAILED)
    body = reopen(client, page)
    assert f'id="page-warning" role="alert">⚠ {WARNING}' in body
    assert 'class="version failed"' in body and 'data-check="failed"' in body


def test_a_page_that_passed_its_check_shows_no_warning(client, classroom, learner, make_page):
    page = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.PASSED)
    body = reopen(client, page)
    assert 'id="page-warning" role="alert" hidden>' in body
    assert 'class="version failed"' not in body


def test_the_teacher_review_flags_a_failed_page(client, teacher, classroom, learner, make_page):
    failed = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.FAILED)
    make_page(classroom=classroom, learner=learner, question="Why do clouds float?", check=RenderCheck.Status.PASSED)
    client.force_login(teacher)
    gallery = client.get(reverse("teacher:review", args=[classroom.pk])).content.decode()
    assert gallery.count("failed its check: learners see a warning") == 1
    assert f'check-failed" data-page="{failed.pk}"' in gallery
    detail = client.get(reverse("teacher:page", args=[failed.pk])).content.decode()
    assert "This page failed its latest render check" in detail


def test_a_failed_page_without_a_picture_says_so_and_its_report_reads_as_words(
    client, teacher, classroom, learner, make_page
):
    failed = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.FAILED, thumbnail=False)
    RenderCheck.objects.filter(page=failed).update(report={
        "url": "http://127.0.0.1:1/__page__/x", "passed": False, "summary": "errors: 1 page error",
        "page_errors": ["SyntaxError: Unexpected token ';'"], "console_errors": []})
    client.force_login(teacher)
    gallery = client.get(reverse("teacher:review", args=[classroom.pk])).content.decode()
    assert reverse("teacher:page-thumbnail", args=[failed.pk]) not in gallery  # it would answer 404
    assert "no picture: failed" in gallery
    detail = client.get(reverse("teacher:page", args=[failed.pk])).content.decode()
    assert "errors: 1 page error" in detail and "SyntaxError: Unexpected token &#x27;;&#x27;" in detail
    assert "{&#x27;url&#x27;" not in detail and "__page__" not in detail


def test_a_teacher_cannot_feature_a_page_that_failed_its_check_and_is_told_why(
    client, teacher, classroom, learner, make_page
):
    failed = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.FAILED)
    client.force_login(teacher)
    detail = client.get(reverse("teacher:page", args=[failed.pk])).content.decode()
    assert 'id="toggle-featured" disabled' in detail and "It cannot be featured" in detail
    response = client.post(reverse("teacher:page-action", args=[failed.pk, "feature"]), follow=True)
    assert "failed its latest render check, so it was not featured" in response.content.decode()
    failed.refresh_from_db()
    assert not failed.featured


def test_a_featured_page_whose_re_run_check_fails_stops_answering_the_question(classroom, learner, make_page):
    from explainer.selectors.review import featured_page_for
    from explainer.services.review import page_set_featured

    page = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.PASSED)
    unchecked = make_page(classroom=classroom, learner=learner, question="Why do clouds float?")
    page_set_featured(page=page, featured=True)
    page_set_featured(page=unchecked, featured=True)
    assert featured_page_for(classroom=classroom, question="How does a magnet attract iron?") == page
    assert featured_page_for(classroom=classroom, question="Why do clouds float?") == unchecked
    RenderCheck.objects.create(page=page, status=RenderCheck.Status.FAILED)
    assert featured_page_for(classroom=classroom, question="How does a magnet attract iron?") is None

"""A render check of a stored page is kept with its thumbnail and reaches the learner as a `qa` event."""

from __future__ import annotations

import pytest

from explainer.models import Generation, PageVersion, RenderCheck, Thread
from explainer.render_check.report import RenderReport
from explainer.render_check.tasks import render_check
from explainer.services.render_checks import render_check_record, render_check_run
from model_worker.contract import stream

from .pages import break_plain_page, kit_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def stored_page(html: str) -> PageVersion:
    thread = Thread.objects.create()
    generation = Generation.objects.create(thread=thread, question="Why do we have day and night?")
    return PageVersion.objects.create(thread=thread, generation=generation, version=1, html=html)


def qa_events(redis_db, page: PageVersion) -> list[dict]:
    return [e for e in stream.decode(stream.since(redis_db, str(page.generation_id))) if e["type"] == "qa"]


def test_a_passing_check_is_stored_with_a_thumbnail_and_announced_to_the_learner(redis_db):
    page = stored_page(kit_page())
    check = render_check_run(page_id=page.pk)

    check.refresh_from_db()
    assert check.status == RenderCheck.Status.PASSED
    assert check.report["passed"] is True
    assert bytes(check.thumbnail).startswith(b"\x89PNG")
    [event] = qa_events(redis_db, page)
    assert event["passed"] is True
    assert event["page"] == page.pk
    assert {c["name"] for c in event["checks"]} >= {"ready", "errors", "canvas", "interaction", "overflow"}
    assert event["thumbnail_url"].startswith(f"/pages/{page.pk}/thumbnail.png?k=")


def test_a_failing_check_names_the_failed_check_in_the_event(redis_db):
    page = stored_page(break_plain_page("renderer.render(scene, camera);", ""))
    check = render_check_run(page_id=page.pk)
    assert check.status == RenderCheck.Status.FAILED
    [event] = qa_events(redis_db, page)
    assert event["passed"] is False
    assert "canvas" in [c["name"] for c in event["checks"] if not c["passed"]]


def test_a_redelivered_task_returns_the_same_check_instead_of_running_again(redis_db):
    page = stored_page(kit_page())
    first = render_check(page.pk)  # the task body, as a worker runs it
    second = render_check(page.pk)
    assert first == second == "passed"
    assert page.checks.count() == 1
    assert len(qa_events(redis_db, page)) == 1


def test_a_check_that_could_not_run_is_an_error_not_a_verdict(redis_db):
    page = stored_page(kit_page())
    check = RenderCheck.objects.create(page=page)
    report = RenderReport(url="about:blank", error="could not start Chromium")
    report.add("ready", False, "the render check could not run")
    render_check_record(check=check, report=report)
    check.refresh_from_db()
    assert check.status == RenderCheck.Status.ERROR
    [event] = qa_events(redis_db, page)
    assert event["status"] == "error" and event["passed"] is False


def test_the_task_for_a_deleted_page_does_nothing():
    assert render_check(987_654) == "missing"

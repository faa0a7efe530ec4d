"""Render checks of stored pages: run one, keep its report and thumbnail, tell the learner."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from explainer import metrics
from explainer.models import PageVersion, RenderCheck
from explainer.pages.links import thumbnail_link
from explainer.render_check import check_html
from explainer.render_check.report import RenderReport
from explainer.services.repairs import repair_plan, repair_queue
from explainer.services.streams import event_append
from model_worker.contract import logs
from model_worker.contract.events import Qa
from model_worker.contract.queues import QA_QUEUE

log = logging.getLogger(__name__)

# A delivery of the same task within this window is a duplicate (a redelivered message), not a re-check.
DUPLICATE_WINDOW = timedelta(seconds=15)
# A pending check older than this belongs to a worker that died.
STALE_AFTER = timedelta(minutes=3)


def render_check_queue(*, page_id: int) -> None:
    """Send a stored page to the render check (once the page is committed)."""
    from explainer.celery import app

    app.send_task("explainer.render_check", args=[page_id], queue=QA_QUEUE)


def render_check_run(*, page_id: int) -> RenderCheck:
    """Check the page in Chromium and record the outcome; raises PageVersion.DoesNotExist."""
    check, ours = _render_check_start(page_id=page_id)
    if not ours:
        return check  # a duplicate delivery: another run owns this check or just finished it
    logs.about(check.page.generation_id)  # the task's lines name the page's generation from here on
    report = check_html(check.page.html)
    return render_check_record(check=check, report=report)


def _render_check_start(*, page_id: int) -> tuple[RenderCheck, bool]:
    """A new pending check, or (when this delivery is a duplicate) the recent one, and whether it is new."""
    now = timezone.now()
    with transaction.atomic():
        page = PageVersion.objects.select_for_update().get(pk=page_id)
        page.checks.filter(status=RenderCheck.Status.PENDING, created_at__lt=now - STALE_AFTER).update(
            status=RenderCheck.Status.ERROR, finished_at=now, report={"error": "the worker running it stopped"}
        )
        recent = (
            page.checks.filter(created_at__gte=now - DUPLICATE_WINDOW)
            .exclude(status=RenderCheck.Status.ERROR)  # a retry after an error is a new attempt
            .order_by("-created_at")
            .first()
        )
        if recent is not None:
            return recent, False
        return RenderCheck.objects.create(page=page, status=RenderCheck.Status.PENDING), True


def render_check_record(*, check: RenderCheck, report: RenderReport) -> RenderCheck:
    """Store a finished report on its check row and send the `qa` event to the page's generation."""
    if report.error:
        check.status = RenderCheck.Status.ERROR
    else:
        check.status = RenderCheck.Status.PASSED if report.passed else RenderCheck.Status.FAILED
    check.report = report.as_dict()
    check.thumbnail = report.thumbnail
    check.finished_at = timezone.now()
    plan = repair_plan(check=check, report=report)  # reads (and routes) before the write lock
    with transaction.atomic():
        check.save(update_fields=["status", "report", "thumbnail", "finished_at"])
        # A repair announces itself (`fixing`) before the `qa` that ends the failed page's stream.
        repair = repair_queue(plan) if plan is not None else None
        transaction.on_commit(lambda: metrics.render_check_ended(
            status=check.status, seconds=(check.finished_at - check.created_at).total_seconds()))
        transaction.on_commit(lambda: _announce(check, report, repair))
    return check


def _announce(check: RenderCheck, report: RenderReport, repair=None) -> None:
    page = check.page
    try:
        event_append(generation_id=page.generation_id, event=Qa(
            page=page.pk, version=page.version, repair=str(repair.pk) if repair else None,
            check=check.pk, status=check.status, passed=check.status == RenderCheck.Status.PASSED,
            summary=report.summary() if not report.error else f"the check could not run: {report.error}",
            checks=tuple({"name": name, **result.as_dict()} for name, result in report.checks.items()),
            thumbnail_url=thumbnail_link(page.pk) if report.thumbnail else None,
        ))
    except Exception:  # noqa: BLE001 - the stored check stands even when Redis is away
        log.exception("could not send the qa event for page %s", page.pk)

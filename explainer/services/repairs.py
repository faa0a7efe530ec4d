"""Bounded repair: a page that fails its render check is asked for again, with what the check found.

The repair is a new generation (kind `repair`) in the same thread, queued to the GPU worker with a
`RepairNote` in its request: chat backends get the failing page and its errors, the demo checkpoint
re-samples. At most `REPAIR_ATTEMPTS` in a row; the failing page stays stored, flagged by its check,
and is never the version a follow-up revises (`thread_current_page`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from explainer import metrics
from explainer.models import Generation, PageVersion, RenderCheck
from explainer.render_check.report import RenderReport
from explainer.selectors.answer_plan import NoPlan, thread_answer_plan
from explainer.selectors.backend import backend_features
from explainer.selectors.generation import repair_attempts_before, thread_current_page
from explainer.services.dispatch import generation_enqueue
from explainer.services.rejection import GenerationRejected
from explainer.services.streams import event_append
from model_worker.contract.events import Error, Fixing
from model_worker.contract.pages import PageRequest, RepairNote

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RepairPlan:
    """What the next repair of a failed page asks for, read before the check is recorded."""

    failed: Generation  # the generation whose page failed
    asked: Generation  # the one that asked the question (the failed one, or the one its repairs go back to)
    page: PageVersion
    attempt: int
    note: RepairNote
    request: PageRequest


def repair_plan(*, check: RenderCheck, report: RenderReport) -> RepairPlan | None:
    """The next repair of the checked page when its check failed and attempts are left. It only reads:
    call it before the transaction that records the check, since routing the thread's topic may build
    the library index, seconds of work that must not hold SQLite's write lock (every learner's question
    would wait on it)."""
    page = check.page
    if check.status != RenderCheck.Status.FAILED or page.hidden:
        return None
    failed = page.generation
    done, asked = repair_attempts_before(generation=failed)
    attempt = done + 1
    if attempt > settings.REPAIR_ATTEMPTS:
        return None
    thread = failed.thread
    features = backend_features()
    previous = None
    if asked.kind == Generation.Kind.FOLLOW_UP and features.revises_pages:
        first_page = getattr(asked, "page", None)
        previous = thread_current_page(thread=thread, before_version=first_page.version if first_page else page.version)
    note = RepairNote(page=page.html, errors=tuple(report.repair_errors()), attempt=attempt)
    # The same topic and page language the failing page was asked for: a repair re-asks, it does not re-route.
    try:
        plan = thread_answer_plan(question=asked.question, lang=asked.lang, thread=thread, features=features,
                                  classroom=failed.classroom)
    except NoPlan:  # the thread's library page is gone: the failed page stays, flagged
        return None
    request = PageRequest(
        question=asked.question, lang=plan.lang, previous_page=previous.html if previous else None,
        topic_note=(thread.topic.note_to_model if thread.topic else None) or None, topic=plan.topic, repair=note,
    )
    return RepairPlan(failed=failed, asked=asked, page=page, attempt=attempt, note=note, request=request)


def repair_queue(plan: RepairPlan) -> Generation:
    """Create the repair's generation and queue it once the transaction commits; call inside the
    transaction that records the failed check."""
    failed, page, attempt, note, request = plan.failed, plan.page, plan.attempt, plan.note, plan.request
    thread = failed.thread
    repair = Generation.objects.create(thread=thread, learner=failed.learner, classroom=failed.classroom,
                                       question=plan.asked.question, lang=plan.asked.lang,
                                       kind=Generation.Kind.REPAIR)

    def announce_and_queue():
        event_append(generation_id=failed.pk, event=Fixing(
            thread=str(thread.pk), page=page.pk, version=page.version, attempt=attempt,
            attempts=settings.REPAIR_ATTEMPTS, errors=note.errors, repair=str(repair.pk),
        ))
        try:
            generation_enqueue(repair, request)
        except GenerationRejected as exc:  # recorded on the repair as failed; its watchers hear it here
            log.warning("repair %s of page %s could not be queued", repair.pk, page.pk)
            try:
                event_append(generation_id=repair.pk, event=Error(code=exc.code, message=exc.message))
            except Exception:  # noqa: BLE001 - Redis is away: the row says failed all the same
                log.exception("could not announce that repair %s failed", repair.pk)

    transaction.on_commit(metrics.repair_queued)
    transaction.on_commit(announce_and_queue)
    return repair

"""How a generation ends: a written page becomes the thread's next version, a stored page answers at once, a
failure or a stop is recorded; each is announced on the generation's stream once it commits."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from explainer import metrics
from explainer.models import Generation, PageVersion
from explainer.selectors.generation import page_url, thread_current_page
from explainer.services import learner_messages
from explainer.services.dispatch import queue_positions_announce, queued_event
from explainer.services.page_versions import page_version_add
from explainer.services.render_checks import render_check_queue
from explainer.services.streams import event_append
from model_worker.contract.events import Done, Error, Topic
from model_worker.contract.pages import PageOutcome


def _announce_done(generation: Generation, page: PageVersion, *, unchanged: bool = False) -> None:
    event_append(generation_id=generation.pk, event=Done(
        thread=str(generation.thread_id), page=page.pk, page_url=page_url(page), version=page.version,
        stats=generation.stats, unchanged=unchanged, state=page.state or None,
    ))


def _announce_page(generation: Generation, page: PageVersion) -> None:
    _announce_done(generation, page)
    render_check_queue(page_id=page.pk)


def generation_answer_stored(generation: Generation, html: str, stats: dict, topic: Topic, *, state: str = "") -> None:
    """A stored page answers at once, as the thread's next version: one the teacher chose (a featured page,
    a topic's exemplar), the routed library page when the backend cannot write it, or the page the learner
    reads shown in the `state` that answers a follow-up. It goes through the render check as a written page
    does, so its stream ends with `qa` like every other."""
    generation.status = Generation.Status.DONE
    generation.started_at = generation.finished_at = timezone.now()
    generation.stats = stats
    generation.save(update_fields=["status", "started_at", "finished_at", "stats"])
    page = page_version_add(generation=generation, html=html, state=state)
    transaction.on_commit(lambda: metrics.generation_ended(outcome="stored"))

    def announce():
        event_append(generation_id=generation.pk, event=queued_event(generation, 0))
        event_append(generation_id=generation.pk, event=topic)
        _announce_page(generation, page)

    transaction.on_commit(announce)


def _unchanged_revision(generation: Generation, html: str) -> PageVersion | None:
    """The version a follow-up revised, when the page written for it is that page to the byte (the demo
    checkpoint knows each lesson one way and writes it again); None otherwise."""
    if generation.kind != Generation.Kind.FOLLOW_UP:
        return None
    current = thread_current_page(thread=generation.thread)
    return current if current is not None and current.html == html else None


def generation_finish(*, generation_id, outcome: PageOutcome) -> Generation:
    """Record how a generation ended (once); a finished page becomes the thread's next version."""
    with transaction.atomic():
        generation = Generation.objects.select_for_update().select_related("thread").get(pk=generation_id)
        if generation.is_finished:
            return generation
        transaction.on_commit(lambda: queue_positions_announce(left=generation))
        generation.stats = outcome.stats
        generation.finished_at = timezone.now()
        if outcome.status == "done" and outcome.html.strip():
            generation.status = Generation.Status.DONE
            transaction.on_commit(lambda: _count_page(generation))
            same = _unchanged_revision(generation, outcome.html)
            if same is not None:
                # The model wrote the page the learner has: no new version, and the learner is told so.
                generation.stats = {**(outcome.stats or {}), "unchanged": True}
                generation.save()
                transaction.on_commit(lambda: _announce_done(generation, same, unchanged=True))
                return generation
            generation.save()
            page = page_version_add(generation=generation, html=outcome.html)
            transaction.on_commit(lambda: _announce_page(generation, page))
            return generation
        if outcome.status == "cancelled":
            generation.status = Generation.Status.CANCELLED
            generation.error_code, generation.error_message = "cancelled", learner_messages.CANCELLED
        else:
            generation.status = Generation.Status.FAILED
            generation.error_code = (outcome.error_code or "generation_failed")[:40]
            generation.error_message = learner_messages.not_written(generation.error_code, outcome.error_message)
        generation.save()
        transaction.on_commit(lambda: metrics.generation_ended(
            outcome=generation.status, error_code=generation.error_code if generation.status == "failed" else ""))
        error = Error(code=generation.error_code, message=generation.error_message)
        transaction.on_commit(lambda: event_append(generation_id=generation.pk, event=error))
    return generation


def _count_page(generation: Generation) -> None:
    metrics.page_written(created_at=generation.created_at, finished_at=generation.finished_at,
                         stats=generation.stats or {})

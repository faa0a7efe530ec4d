"""Writes for the learner's flow: ask or follow up, then record how the generation ended."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from explainer.models import Generation, Learner, PageVersion, Thread
from explainer.selectors.exemplars import exemplar_html
from explainer.selectors.generation import (
    generation_queue_position,
    page_url,
    thread_current_page,
    thread_for_session,
)
from explainer.selectors.review import featured_page_for
from explainer.services import moderation
from explainer.services.repairs import backend_revises_pages
from explainer.services.streams import event_append, redis_client
from model_worker import events
from model_worker.backends.base import LANGS, PageOutcome, PageRequest

log = logging.getLogger(__name__)


class GenerationRejected(Exception):
    """The request cannot become a generation; `code` and `message` go to the learner as an `error`."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def question_clean(question: str) -> str:
    """The question as the model will see it, or `GenerationRejected` for an empty or oversized one."""
    if not isinstance(question, str):
        raise GenerationRejected("bad_field", "The question must be text.")
    question = question.strip()
    if not question:
        raise GenerationRejected("empty_question", "Type a question first.")
    limit = settings.QUESTION_MAX_CHARS
    if len(question) > limit:
        raise GenerationRejected(
            "question_too_long", f"That question is {len(question)} characters; please keep it under {limit}."
        )
    return question


def generation_create(
    *, question: str, session_key: str, lang: str = "en", thread_id=None, learner: Learner | None = None
) -> Generation:
    """Start answering a question: a new thread, or a follow-up revising the thread's latest page."""
    question = question_clean(question)
    if lang not in LANGS:
        raise GenerationRejected("bad_field", f"Unknown language {lang!r}: use one of {', '.join(LANGS)}.")
    thread = None
    if thread_id is not None:
        thread = thread_for_session(thread_id=thread_id, session_key=session_key)
        if thread is None:
            raise GenerationRejected("unknown_thread", "That thread does not exist or is not yours.")
    classroom = learner.classroom if learner else None
    kind = Generation.Kind.FOLLOW_UP if thread else Generation.Kind.ASK
    # Moderation records what it stops or flags; those rows are meant to stay even when it says no.
    verdict = moderation.question_check(classroom=classroom, learner=learner, question=question, lang=lang, kind=kind)
    if not verdict.allowed:
        raise GenerationRejected(verdict.code, verdict.message)
    with transaction.atomic():
        if thread is None:
            thread = Thread.objects.create(
                session_key=session_key, learner=learner, classroom=classroom, topic_id=verdict.topic_id
            )
        generation = Generation.objects.create(
            thread=thread, learner=learner, classroom=classroom, question=question, lang=lang, kind=kind
        )
        featured = featured_page_for(classroom=classroom, question=question) if kind == "ask" else None
        if featured is not None:
            _answer_from_library(generation, featured.html, {"featured_page": featured.pk})
            return generation
        exemplar = exemplar_html(verdict.topic_exemplar) if kind == "ask" and verdict.topic_exemplar else None
        if exemplar is not None:
            _answer_from_library(generation, exemplar, {"exemplar": verdict.topic_exemplar})
            return generation
        # A backend that cannot revise a page answers a follow-up as a new question on the thread.
        previous = thread_current_page(thread=thread) if backend_revises_pages() else None
        topic_note = verdict.topic_note or (thread.topic.note_to_model if thread.topic else None)
        request = PageRequest(
            question=question,
            lang=lang,
            previous_page=previous.html if previous else None,
            topic_note=topic_note or None,
        )
        transaction.on_commit(lambda: generation_enqueue(generation, request))
    return generation


def generation_enqueue(generation: Generation, request: PageRequest) -> None:
    """Send a generation's request to the GPU queue, announcing it as `queued`."""
    from explainer.celery import app

    try:
        position = generation_queue_position(generation=generation)
        event_append(generation_id=generation.pk, type="queued", thread=str(generation.thread_id), position=position)
        app.send_task(
            "model_worker.generate_page",
            args=[str(generation.pk), request.to_dict()],
            kwargs={"stream_maxlen": settings.GENERATION_STREAM_MAXLEN,
                    "stream_ttl_s": settings.GENERATION_STREAM_TTL_S},
            queue="gpu",
        )
    except Exception as exc:  # Redis or the broker is away: nothing will run it, so say so now
        log.exception("could not queue generation %s", generation.pk)
        message = "The explainer cannot take questions right now. Please try again in a minute."
        Generation.objects.filter(pk=generation.pk, status=Generation.Status.QUEUED).update(
            status=Generation.Status.FAILED, error_code="unavailable", error_message=message,
            finished_at=timezone.now(),
        )
        raise GenerationRejected("unavailable", message) from exc


def _answer_from_library(generation: Generation, html: str, stats: dict) -> None:
    """A page the teacher chose (a featured page, a topic's exemplar) answers at once, as version 1."""
    generation.status = Generation.Status.DONE
    generation.started_at = generation.finished_at = timezone.now()
    generation.stats = stats
    generation.save(update_fields=["status", "started_at", "finished_at", "stats"])
    page = PageVersion.objects.create(thread=generation.thread, generation=generation, version=1, html=html)

    def announce():
        event_append(generation_id=generation.pk, type="queued", thread=str(generation.thread_id), position=0)
        _announce_done(generation, page)

    transaction.on_commit(announce)


def _announce_done(generation: Generation, page: PageVersion) -> None:
    event_append(
        generation_id=generation.pk, type="done", thread=str(generation.thread_id), page=page.pk,
        page_url=page_url(page), version=page.version, stats=generation.stats,
    )


def generation_finish(*, generation_id, outcome: PageOutcome) -> Generation:
    """Record how a generation ended (once); a finished page becomes the thread's next version."""
    from explainer.celery import app

    with transaction.atomic():
        generation = Generation.objects.select_for_update().select_related("thread").get(pk=generation_id)
        if generation.is_finished:
            return generation
        status = outcome.status
        generation.stats = outcome.stats
        generation.finished_at = timezone.now()
        if status == "done" and outcome.html.strip():
            generation.status = Generation.Status.DONE
            generation.save()
            latest = generation.thread.pages.aggregate(n=Max("version"))["n"] or 0
            page = PageVersion.objects.create(
                thread=generation.thread, generation=generation, version=latest + 1, html=outcome.html
            )
            # Output moderation: a page with a blocked term is hidden at once, a flagged one queued for the teacher.
            moderation.page_screen(page=page)

            def announce():
                _announce_done(generation, page)
                app.send_task("explainer.render_check", args=[page.pk], queue="qa")

            transaction.on_commit(announce)
            return generation
        if status == "cancelled":
            generation.status = Generation.Status.CANCELLED
            generation.error_code, generation.error_message = "cancelled", "Stopped before the page was finished."
        else:
            generation.status = Generation.Status.FAILED
            generation.error_code = (outcome.error_code or "generation_failed")[:40]
            generation.error_message = outcome.error_message or "The page could not be written."
        generation.save()
        code, message = generation.error_code, generation.error_message
        transaction.on_commit(lambda: event_append(generation_id=generation.pk, type="error", code=code,
                                                   message=message))
    return generation


def generation_cancel(*, generation: Generation) -> None:
    """Ask the worker to stop this generation at its next block boundary."""
    events.cancel(redis_client(), str(generation.pk), settings.GENERATION_STREAM_TTL_S)

"""Writes for the learner's flow: ask or follow up, then record how the generation ended."""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from explainer.library.router import AnswerPlan, answer_plan
from explainer.library.text import (
    asked_language,
    clean_question,
    has_content,
    normalise_question,
    question_language,
)
from explainer.models import Generation, Learner, PageVersion, Thread
from explainer.selectors.backend import backend_features, backend_writable
from explainer.selectors.exemplars import exemplar_html
from explainer.selectors.generation import (
    generation_queue_position,
    generations_waiting_after,
    page_url,
    thread_current_page,
    thread_for_session,
)
from explainer.selectors.library import library_page_html, question_route, thread_route
from explainer.selectors.review import featured_page_for
from explainer.services import moderation, rate_limits
from explainer.services.streams import event_append, redis_client
from explainer.services.topic_requests import topic_request_record
from model_worker.contract import lifecycle, stream
from model_worker.contract.pages import LANGS, PageOutcome, PageRequest
from model_worker.contract.queues import GPU_QUEUE, PAGE_PRIORITY

log = logging.getLogger(__name__)


UNKNOWN_TOPIC = {
    "en": "The library has no page on that topic yet, so there is nothing reliable to show you. ",
    "zh": "资料库里还没有关于这个主题的页面，所以暂时没有可靠的讲解。",
}
# The nearest topic came close but not close enough (`Route.unsure`): the library may have the page, and the
# learner is the one who can tell.
UNSURE_TOPIC = {
    "en": "I am not sure the library has a page on that, so I have not written one. "
          "If your question is about one of the topics below, pick it. ",
    "zh": "我不确定资料库里有没有讲这个问题的页面，所以没有写页面。如果你问的是下面的某个主题，点一下就行。",
}
# Who will see the question: a class's teacher, or (asked outside a class) the library's editors.
REQUEST_PASSED_ON = {
    ("en", True): "Your question has been passed on to your teacher as a requested topic.",
    ("en", False): "Your question has been noted as a topic to add to the library.",
    ("zh", True): "你的问题已经作为“想学的主题”转告给你的老师。",
    ("zh", False): "你的问题已经记下，作为资料库以后要补充的主题。",
}
UNAVAILABLE = "The explainer cannot take questions right now. Please try again in a minute."
CANNOT_REVISE = {
    "en": "This page is the library's own lesson, and the model here cannot change it: asking again would "
          "show you the same page. Ask a new question to explore another topic.",
    "zh": "这个页面是资料库里现成的课，这里的模型没法修改它；再问一次也只会显示同一页。可以提一个新问题，看看别的主题。",
}

TOPIC_GONE = {
    "en": "The library page this conversation was about has been removed, so it cannot be revised. "
          "Ask a new question instead.",
    "zh": "这段对话讲的资料库页面已被移除，所以不能再修改。可以提一个新问题。",
}
PAGE_HIDDEN = {
    "en": "Your teacher hid this page, so it cannot be revised. Ask a new question instead.",
    "zh": "老师隐藏了这个页面，所以不能再修改它。可以提一个新问题。",
}


class GenerationRejected(Exception):
    """The request cannot become a generation; `code` and `message` go to the learner as an `error`.

    `topic` is the `topic` event that goes before the error (what the router understood); `extra`
    are more fields of the error (the nearest topics of an `unknown_topic`).
    """

    def __init__(self, code: str, message: str, *, topic: dict | None = None, **extra):
        super().__init__(message)
        self.code, self.message, self.topic, self.extra = code, message, topic, extra


def question_clean(question: str) -> str:
    """The question as the model will see it, or `GenerationRejected` for an empty, oversized or
    unsupported-language one."""
    if not isinstance(question, str):
        raise GenerationRejected("bad_field", "The question must be text.")
    question = clean_question(question)
    if not question:
        raise GenerationRejected("empty_question", "Type a question first.")
    if not has_content(normalise_question(question)):
        raise GenerationRejected("empty_question", "That question has no words in it. Type a question first.")
    limit = settings.QUESTION_MAX_CHARS
    if len(question) > limit:
        raise GenerationRejected(
            "question_too_long", f"That question is {len(question)} characters; please keep it under {limit}."
        )
    lang, looks_like = question_language(normalise_question(question))
    if lang is None:
        raise GenerationRejected(
            "unsupported_language",
            f"Explainer answers questions in English or Chinese (中文), and this one looks like {looks_like}. "
            "Please ask it in English or Chinese.",
        )
    return question


def _answer_plan(*, question: str, lang: str, thread: Thread | None, picked: str | None,
                 exemplar: str | None, classroom=None) -> AnswerPlan:
    """What the backend is asked for: the thread's topic for a follow-up, else the router's choice over
    the class's library."""
    route = None
    if thread is not None and thread.topic_slug:
        route = thread_route(slug=thread.topic_slug, lang=lang, classroom=classroom)
        if route is None and not backend_features().open_domain:
            # The class page the thread is about was removed: routing the follow-up's words again would
            # answer it with a page on some other topic.
            raise GenerationRejected("cannot_revise", TOPIC_GONE.get(lang, TOPIC_GONE["en"]))
    elif exemplar or picked:
        route = question_route(question=question, lang=lang, picked=exemplar or picked, classroom=classroom)
        if route is None and picked and not exemplar:
            raise GenerationRejected("bad_field", f"The library has no topic {picked!r}.")
    if route is None:
        route = question_route(question=question, lang=lang, classroom=classroom)
    open_domain = backend_features().open_domain
    return answer_plan(route, open_domain=open_domain, writable=None if open_domain else backend_writable())


def thread_answer_plan(*, question: str, lang: str, thread: Thread, classroom=None) -> AnswerPlan:
    """The plan of a new generation in a thread that already has its topic (a repair): the thread's
    topic, in the language its page is written in, as the thread's first question was asked."""
    return _answer_plan(question=question, lang=lang, thread=thread, picked=None, exemplar=None,
                        classroom=classroom)


def generation_create(
    *, question: str, session_key: str, lang: str | None = None, thread_id=None, learner: Learner | None = None,
    topic: str | None = None, client: rate_limits.Client | None = None,
) -> Generation:
    """Start answering a question: a new thread, or a follow-up revising the thread's latest page.

    `topic`: the slug of a library page the learner picked (a nearest topic they clicked).
    `client` (the asking browser's lasting id and address) is what the rate limits count by.
    """
    if lang is not None and lang not in LANGS:
        raise GenerationRejected("bad_field", f"Unknown language {lang!r}: use one of {', '.join(LANGS)}.")
    question = question_clean(question)
    lang = asked_language(question, lang)  # a client that does not say gets the question's own language
    if lang not in LANGS:
        raise GenerationRejected("bad_field", f"Unknown language {lang!r}: use one of {', '.join(LANGS)}.")
    thread = None
    if thread_id is not None:
        thread = thread_for_session(thread_id=thread_id, session_key=session_key)
        if thread is None:
            raise GenerationRejected("unknown_thread", "That thread does not exist or is not yours.")
    try:
        counted = rate_limits.question_count(client=client or rate_limits.Client(session_key=session_key),
                                             learner=learner)
    except rate_limits.RateLimited as exc:
        raise GenerationRejected(exc.code, exc.message) from None
    except rate_limits.LimitsUnavailable:
        raise GenerationRejected("unavailable", UNAVAILABLE) from None
    classroom = learner.classroom if learner else None
    kind = Generation.Kind.FOLLOW_UP if thread else Generation.Kind.ASK
    # Moderation records what it stops or flags; those rows are meant to stay even when it says no.
    verdict = moderation.question_check(classroom=classroom, learner=learner, question=question, lang=lang, kind=kind)
    if not verdict.allowed:
        raise GenerationRejected(verdict.code, verdict.message)
    if thread is not None and thread.pages.exists() and not thread.pages.filter(hidden=False).exists():
        # Every version was hidden by a teacher: a revision would bring the hidden page back.
        rate_limits.question_refund(counted)
        raise GenerationRejected("cannot_revise", PAGE_HIDDEN.get(lang, PAGE_HIDDEN["en"]))
    featured = featured_page_for(classroom=classroom, question=question) if kind == "ask" else None
    pinned = verdict.topic_exemplar if kind == "ask" else None
    plan = _answer_plan(question=question, lang=lang, thread=thread, picked=topic if kind == "ask" else None,
                        exemplar=pinned, classroom=classroom)
    stored = library_page_html(slug=plan.topic, classroom=classroom) if plan.from_library else None
    if stored is not None and kind == Generation.Kind.FOLLOW_UP and _reading(thread, stored):
        # The thread keeps its topic, so the answer would be the page the learner is already reading. (In
        # the other language the stored page is a new version: the same lesson in the asked language.)
        rate_limits.question_refund(counted)
        raise GenerationRejected("cannot_revise", CANNOT_REVISE.get(lang, CANNOT_REVISE["en"]))
    if plan.refuse and featured is None:
        topic_request_record(classroom=classroom, learner=learner, question=question, lang=lang,
                             nearest=[n["slug"] for n in plan.event["nearest"]], score=plan.event["score"] or 0.0)
        rate_limits.question_refund(counted)  # nothing was written: a class's daily allowance keeps it
        words = "zh" if lang == "zh" else "en"
        message = (UNSURE_TOPIC if plan.unsure else UNKNOWN_TOPIC)[words] + REQUEST_PASSED_ON[words, classroom is not None]
        raise GenerationRejected("unknown_topic", message, topic=plan.event, nearest=plan.event["nearest"],
                                 unsure=plan.unsure)
    with transaction.atomic():
        if thread is None:
            thread = Thread.objects.create(
                session_key=session_key, learner=learner, classroom=classroom, topic_id=verdict.topic_id,
                topic_slug=plan.topic or "",
            )
        generation = Generation.objects.create(
            thread=thread, learner=learner, classroom=classroom, question=question, lang=lang, kind=kind
        )
        if featured is not None:
            _answer_from_library(generation, featured.html, {"featured_page": featured.pk}, plan.event)
            return generation
        exemplar = exemplar_html(pinned) if pinned else None
        if exemplar is not None:
            _answer_from_library(generation, exemplar, {"exemplar": pinned}, plan.event)
            return generation
        if stored is not None:  # a library page the backend cannot write: the stored page is the answer
            _answer_from_library(generation, stored, {"source": "library", "library_page": plan.topic}, plan.event)
            return generation
        # A backend that cannot revise a page answers a follow-up as a new question on the thread.
        previous = thread_current_page(thread=thread) if backend_features().revises_pages else None
        topic_note = verdict.topic_note or (thread.topic.note_to_model if thread.topic else None)
        request = PageRequest(
            question=question,
            lang=plan.lang,
            previous_page=previous.html if previous else None,
            topic_note=topic_note or None,
            topic=plan.topic,
        )
        transaction.on_commit(lambda: generation_enqueue(generation, request, topic_event=plan.event))
    return generation


def _reading(thread: Thread, html: str) -> bool:
    """Whether the thread's current page is this stored page."""
    current = thread_current_page(thread=thread)
    return current is not None and current.html == html


def _topic_event(generation: Generation, event: dict) -> None:
    event_append(generation_id=generation.pk, **event)


def generation_enqueue(generation: Generation, request: PageRequest, *, topic_event: dict | None = None) -> None:
    """Send a generation's request to the GPU queue, announcing it as `queued` (then its `topic`)."""
    try:
        position = generation_queue_position(generation=generation)
        event_append(generation_id=generation.pk, type="queued", thread=str(generation.thread_id), position=position)
        if topic_event is not None:
            _topic_event(generation, topic_event)
        generation_send(str(generation.pk), request.to_dict())
    except Exception as exc:  # Redis or the broker is away: nothing will run it, so say so now
        log.exception("could not queue generation %s", generation.pk)
        message = UNAVAILABLE
        Generation.objects.filter(pk=generation.pk, status=Generation.Status.QUEUED).update(
            status=Generation.Status.FAILED, error_code="unavailable", error_message=message,
            finished_at=timezone.now(),
        )
        raise GenerationRejected("unavailable", message) from exc


def generation_send(generation_id: str, request: dict, *, priority: int = PAGE_PRIORITY) -> None:
    """Put the generation's task on the `gpu` queue, with the ticket and request the reaper reads; a
    page sent again (`REDELIVERY_PRIORITY`) goes ahead of those waiting."""
    from explainer.celery import app

    r = redis_client()
    lifecycle.keep_request(r, generation_id, request, settings.GENERATION_STREAM_TTL_S)
    lifecycle.ticket(r, generation_id, settings.GENERATION_STREAM_TTL_S)
    app.send_task(
        "model_worker.generate_page",
        args=[generation_id, request],
        kwargs={"stream_maxlen": settings.GENERATION_STREAM_MAXLEN, "stream_ttl_s": settings.GENERATION_STREAM_TTL_S},
        queue=GPU_QUEUE,
        priority=priority,
    )


def queue_positions_announce(*, left: Generation) -> None:
    """`left` has left the queue: every generation still waiting behind it hears its new position."""
    try:
        r = redis_client()
        waiting = generations_waiting_after(generation=left)
        if not waiting:
            return
        claims = r.mget([stream.key(str(g.pk), "claim") for g, _ in waiting])
        for (generation, position), claim in zip(waiting, claims, strict=True):
            if claim is None:  # not yet taken by a worker
                event_append(generation_id=generation.pk, type="queued", thread=str(generation.thread_id),
                             position=position)
    except Exception:  # positions are a courtesy: a failure here must not undo the finish
        log.exception("could not announce queue positions after %s", left.pk)


def _answer_from_library(generation: Generation, html: str, stats: dict, topic_event: dict) -> None:
    """A stored page answers at once, as the thread's next version: one the teacher chose (a featured
    page, a topic's exemplar), or the routed library page when the backend cannot write it. It goes
    through the render check as a written page does, so its stream ends with `qa` like every other."""
    generation.status = Generation.Status.DONE
    generation.started_at = generation.finished_at = timezone.now()
    generation.stats = stats
    generation.save(update_fields=["status", "started_at", "finished_at", "stats"])
    latest = generation.thread.pages.aggregate(n=Max("version"))["n"] or 0
    page = PageVersion.objects.create(thread=generation.thread, generation=generation, version=latest + 1, html=html)
    # Screened as a written page is: a flagged question's page waits in the teacher's queue, where hiding it works.
    moderation.page_screen(page=page)

    def announce():
        event_append(generation_id=generation.pk, type="queued", thread=str(generation.thread_id), position=0)
        _topic_event(generation, topic_event)
        _announce_done(generation, page)
        from explainer.celery import app

        app.send_task("explainer.render_check", args=[page.pk], queue="qa")

    transaction.on_commit(announce)


def _announce_done(generation: Generation, page: PageVersion, *, unchanged: bool = False) -> None:
    extra = {"unchanged": True} if unchanged else {}
    event_append(
        generation_id=generation.pk, type="done", thread=str(generation.thread_id), page=page.pk,
        page_url=page_url(page), version=page.version, stats=generation.stats, **extra,
    )


def _unchanged_revision(generation: Generation, html: str) -> PageVersion | None:
    """The version a follow-up revised, when the page written for it is that page to the byte (the demo
    checkpoint knows each lesson one way and writes it again); None otherwise."""
    if generation.kind != Generation.Kind.FOLLOW_UP:
        return None
    current = thread_current_page(thread=generation.thread)
    return current if current is not None and current.html == html else None


def generation_finish(*, generation_id, outcome: PageOutcome) -> Generation:
    """Record how a generation ended (once); a finished page becomes the thread's next version."""
    from explainer.celery import app

    with transaction.atomic():
        generation = Generation.objects.select_for_update().select_related("thread").get(pk=generation_id)
        if generation.is_finished:
            return generation
        transaction.on_commit(lambda: queue_positions_announce(left=generation))
        status = outcome.status
        generation.stats = outcome.stats
        generation.finished_at = timezone.now()
        if status == "done" and outcome.html.strip():
            generation.status = Generation.Status.DONE
            same = _unchanged_revision(generation, outcome.html)
            if same is not None:
                # The model wrote the page the learner has: no new version, and the learner is told so.
                generation.stats = {**(outcome.stats or {}), "unchanged": True}
                generation.save()
                transaction.on_commit(lambda: _announce_done(generation, same, unchanged=True))
                return generation
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
    """Stop this generation: a worker writing it stops at its next block boundary; one still waiting in
    the queue is cancelled now (the learner does not wait for a worker to take it just to stop it)."""
    r, generation_id = redis_client(), str(generation.pk)
    stream.cancel(r, generation_id, settings.GENERATION_STREAM_TTL_S)
    if generation.status != Generation.Status.QUEUED:
        return
    # Taking the claim is atomic against a worker's: whoever gets it decides, and a worker that takes the
    # task later finds it finished and skips it.
    token = f"web-cancel:{uuid.uuid4().hex[:8]}"
    if lifecycle.claim(r, generation_id, token) in (lifecycle.HELD, lifecycle.FINISHED):
        return  # a worker has it (or it ended): the flag stops it
    outcome = PageOutcome(status="cancelled")
    lifecycle.finish(r, generation_id, token, outcome.to_dict())
    generation_finish(generation_id=generation.pk, outcome=outcome)

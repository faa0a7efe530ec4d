"""A learner asks: the question is checked, counted, moderated and planned, then becomes a generation (queued
for the GPU worker, or answered at once with a stored page) or a refusal the learner hears as an `error`."""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings
from django.db import transaction

from explainer import metrics
from explainer.library.class_topics import topic_id_of
from explainer.library.router import AnswerPlan
from explainer.library.text import (
    asked_language,
    clean_question,
    has_content,
    normalise_question,
    question_language,
)
from explainer.models import Generation, Learner, Thread
from explainer.selectors.answer_plan import NoPlan, answer_plan_for, nearest_refs, topic_event
from explainer.selectors.backend import backend_features
from explainer.selectors.exemplars import exemplar_html
from explainer.selectors.generation import thread_current_page, thread_first_generation, thread_for_session
from explainer.selectors.library import library_page_html
from explainer.selectors.page_state import OnPage, follow_up_on_page
from explainer.selectors.review import featured_page_for
from explainer.services import learner_messages as say
from explainer.services import moderation, rate_limits, route_learning
from explainer.services.dispatch import generation_enqueue
from explainer.services.finishing import generation_answer_stored
from explainer.services.rejection import GenerationRejected
from explainer.services.second_opinion import second_opinion_plan
from explainer.services.topic_requests import topic_request_record
from model_worker.contract.events import TopicRef
from model_worker.contract.pages import LANGS, BackendCapabilities, PageRequest


def question_clean(question: str) -> str:
    """The question as the model will see it, or `GenerationRejected` for an empty, oversized or
    unsupported-language one."""
    if not isinstance(question, str):
        raise GenerationRejected("bad_field", say.NOT_TEXT)
    question = clean_question(question)
    if not question:
        raise GenerationRejected("empty_question", say.EMPTY)
    if not has_content(normalise_question(question)):
        raise GenerationRejected("empty_question", say.NO_WORDS)
    limit = settings.QUESTION_MAX_CHARS
    if len(question) > limit:
        raise GenerationRejected("question_too_long", say.too_long(len(question), limit))
    lang, looks_like = question_language(normalise_question(question))
    if lang is None:
        raise GenerationRejected("unsupported_language", say.unsupported_language(looks_like))
    return question


def _known_language(lang: str | None, *, required: bool = False) -> str | None:
    if (lang is not None or required) and lang not in LANGS:
        raise GenerationRejected("bad_field", say.unknown_language(lang, LANGS))
    return lang


def _plan(*, question: str, lang: str, features: BackendCapabilities, thread: Thread | None, picked: str | None,
          exemplar: str | None, classroom) -> AnswerPlan:
    try:
        return answer_plan_for(question=question, lang=lang, features=features, thread=thread, picked=picked,
                               exemplar=exemplar, classroom=classroom)
    except NoPlan as exc:
        if exc.code == "cannot_revise":
            raise GenerationRejected("cannot_revise", say.in_lang(say.TOPIC_GONE, lang), refund=True) from None
        raise GenerationRejected("bad_field", say.unknown_library_topic(exc.picked), refund=True) from None


def _reading(thread: Thread, html: str) -> bool:
    """Whether the thread's current page is this stored page."""
    current = thread_current_page(thread=thread)
    return current is not None and current.html == html


def generation_create(
    *, question: str, session_key: str, lang: str | None = None, thread_id=None, learner: Learner | None = None,
    topic: str | None = None, client: rate_limits.Client | None = None,
) -> Generation:
    """Start answering a question: a new thread, or a follow-up revising the thread's latest page.

    `topic`: the slug of a library page the learner picked (a nearest topic they clicked).
    `client` (the asking browser's lasting id and address) is what the rate limits count by.
    """
    _known_language(lang)
    question = question_clean(question)
    # A client that does not say gets the question's own language.
    lang = _known_language(asked_language(question, lang), required=True)
    thread = None
    if thread_id is not None:
        thread = thread_for_session(thread_id=thread_id, session_key=session_key)
        if thread is None:
            raise GenerationRejected("unknown_thread", say.in_lang(say.UNKNOWN_THREAD, lang))
    try:
        counted = rate_limits.question_count(client=client or rate_limits.Client(session_key=session_key),
                                             learner=learner)
    except rate_limits.RateLimited as exc:
        metrics.rate_limit_refused(code=exc.code)
        raise GenerationRejected(exc.code, say.in_lang(exc.msgid, lang)) from None
    except rate_limits.LimitsUnavailable:
        raise GenerationRejected("unavailable", say.in_lang(say.UNAVAILABLE, lang)) from None
    route_learning.pick_followed(session_key=session_key, learner=learner, thread=thread)
    try:
        generation = _answer(question=question, lang=lang, thread=thread, learner=learner, session_key=session_key,
                             picked=topic)
    except GenerationRejected as exc:
        if exc.refund:  # nothing was written: a class's daily allowance keeps the question
            rate_limits.question_refund(counted)
        raise
    if topic is not None and thread is None and topic_id_of(topic) is None:
        route_learning.pick_learn(generation=generation, picked=topic, session_key=session_key, learner=learner)
    return generation


def _answer(*, question: str, lang: str, thread: Thread | None, learner: Learner | None, session_key: str,
            picked: str | None) -> Generation:
    """The counted question's generation, or a `GenerationRejected` (with `refund` when nothing was written)."""
    classroom = learner.classroom if learner else None
    kind = Generation.Kind.FOLLOW_UP if thread else Generation.Kind.ASK
    # Moderation records what it stops or flags; those rows are meant to stay even when it says no.
    # A class topic the learner picked from an unsure refusal is moderation's to decide; the router routes the words.
    class_pick = picked if picked is not None and topic_id_of(picked) is not None else None
    verdict = moderation.question_check(classroom=classroom, learner=learner, question=question, lang=lang, kind=kind,
                                        picked_topic=class_pick)
    if not verdict.allowed:
        offered = tuple(TopicRef(slug=o.slug, title=o.title) for o in verdict.nearest)
        # A question outside the class's topics or languages got no answer, so the allowance keeps it, as for a
        # topic the library lacks. A blocked one stays counted: the limit also slows a learner trying words out.
        raise GenerationRejected(verdict.code, verdict.message, nearest=offered or None,
                                 unsure=verdict.unsure if offered else None, refund=verdict.code != "blocked")
    if class_pick is not None:
        picked = None
    if thread is not None and thread.pages.exists() and not thread.pages.filter(hidden=False).exists():
        # Every version was hidden by a teacher: a revision would bring the hidden page back.
        raise GenerationRejected("cannot_revise", say.in_lang(say.PAGE_HIDDEN, lang), refund=True)
    features = backend_features()
    featured = featured_page_for(classroom=classroom, question=question) if kind == "ask" else None
    pinned = verdict.topic_exemplar if kind == "ask" else None
    plan = _plan(question=question, lang=lang, features=features, thread=thread,
                 picked=picked if kind == "ask" else None, exemplar=pinned, classroom=classroom)
    opinion = None
    if kind == Generation.Kind.ASK:
        metrics.router_decided(decision=_decision(plan))
        if featured is None and pinned is None:  # a stored page answers those: no lesson grounds a model's page
            plan, opinion = second_opinion_plan(plan=plan, question=question, features=features)
    topic = topic_event(plan, question=question if kind == Generation.Kind.ASK else _first_question(thread))
    on_page = follow_up_on_page(thread=thread, question=question, lang=lang) if thread is not None else None
    if on_page is not None and on_page.hidden:
        # A teacher hid this page (in another of its states): showing it again in a new state would bring it back.
        raise GenerationRejected("cannot_revise", say.in_lang(say.PAGE_HIDDEN, lang), refund=True)
    if on_page is not None:  # the page itself answers, whatever the backend: it opens in that state
        return _answer_on_page(on_page, question=question, lang=lang, learner=learner, classroom=classroom,
                               topic=topic)
    stored = library_page_html(slug=plan.topic, classroom=classroom) if plan.from_library else None
    if stored is not None and kind == Generation.Kind.FOLLOW_UP and _reading(thread, stored):
        # The thread keeps its topic, so the model's answer would be the page the learner is already reading,
        # which cannot show it either. (In the other language the stored page is a new version: the same
        # lesson in the asked language.)
        raise _not_on_page(question=question, lang=lang, plan=plan, features=features, classroom=classroom)
    if plan.refuse and featured is None:
        topic_request_record(classroom=classroom, learner=learner, question=question, lang=lang,
                             nearest=[p.slug for p in plan.route.nearest], score=plan.route.score or 0.0,
                             session_key=session_key, unsure=plan.unsure)
        raise GenerationRejected(
            "unknown_topic", say.refused_topic(lang=lang, unsure=plan.unsure, in_class=classroom is not None),
            topic=topic, nearest=nearest_refs(plan), unsure=plan.unsure, refund=True,
        )
    with transaction.atomic():
        if thread is None:
            thread = Thread.objects.create(
                session_key=session_key, learner=learner, classroom=classroom, topic_id=verdict.topic_id,
                topic_slug=plan.topic or "",
            )
        generation = Generation.objects.create(
            thread=thread, learner=learner, classroom=classroom, question=question, lang=lang, kind=kind,
            second_opinion=opinion.verdict if opinion else "", second_opinion_lesson=opinion.lesson if opinion else "",
        )
        exemplar = exemplar_html(pinned) if pinned and featured is None else None
        if featured is not None:
            generation_answer_stored(generation, featured.html, {"featured_page": featured.pk}, topic)
        elif exemplar is not None:
            generation_answer_stored(generation, exemplar, {"exemplar": pinned}, topic)
        elif stored is not None:  # a library page the backend cannot write: the stored page is the answer
            generation_answer_stored(generation, stored, {"source": "library", "library_page": plan.topic}, topic)
        else:
            request = _request(question=question, plan=plan, thread=thread, features=features,
                               topic_note=verdict.topic_note)
            transaction.on_commit(lambda: generation_enqueue(generation, request, topic=topic))
    return generation


def _first_question(thread: Thread) -> str | None:
    """The question a thread's pages answer: its first."""
    first = thread_first_generation(thread=thread)
    return first.question if first else None


def _decision(plan: AnswerPlan) -> str:
    """What the router made of a question, as the metrics count it; `open`: no library topic, written by an
    open-domain backend all the same."""
    if plan.refuse:
        return "unsure" if plan.unsure else "refused"
    return "routed" if plan.topic else "open"


def _answer_on_page(on_page: OnPage, *, question: str, lang: str, learner: Learner | None, classroom,
                    topic) -> Generation:
    """The page the learner reads, shown in the state that answers the follow-up: the thread's next version, at
    once, with no model."""
    with transaction.atomic():
        generation = Generation.objects.create(thread=on_page.page.thread, learner=learner, classroom=classroom,
                                               question=question, lang=lang, kind=Generation.Kind.FOLLOW_UP)
        stats = {"source": "page", "state": on_page.fragment, "page": on_page.page.pk}
        generation_answer_stored(generation, on_page.page.html, stats, replace(topic, source="page"),
                                 state=on_page.fragment)
    return generation


def _not_on_page(*, question: str, lang: str, plan: AnswerPlan, features: BackendCapabilities,
                 classroom) -> GenerationRejected:
    """A follow-up neither the page nor the backend can answer, refused as an unknown question is: with the
    library's topics nearest its words (the thread's own, in either language, left out: the learner is reading
    it)."""
    words = answer_plan_for(question=question, lang=lang, features=features, classroom=classroom)
    reading = plan.route.page.topic if plan.route.page else None
    own = {page.slug for page in words.route.nearest if page.topic == reading}
    nearest = tuple(ref for ref in nearest_refs(words) if ref.slug not in own)
    return GenerationRejected("unknown_topic", say.not_on_page(lang=lang, offered=bool(nearest)), nearest=nearest,
                              unsure=words.unsure, refund=True)


def _request(*, question: str, plan: AnswerPlan, thread: Thread, features: BackendCapabilities,
             topic_note: str | None) -> PageRequest:
    """What the GPU worker is asked to write. A backend that cannot revise a page answers a follow-up as a
    new question on the thread."""
    previous = thread_current_page(thread=thread) if features.revises_pages else None
    note = topic_note or (thread.topic.note_to_model if thread.topic else None)
    return PageRequest(question=question, lang=plan.lang, previous_page=previous.html if previous else None,
                       topic_note=note or None, topic=plan.topic)

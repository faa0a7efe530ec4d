"""What a question is answered with: the thread's topic for a follow-up, else the router's choice over the
class's library, decided with what the backend can do (`AnswerPlan`), and the `topic` event that says so."""

from __future__ import annotations

from explainer.library.router import AnswerPlan, answer_plan
from explainer.models import Thread
from explainer.selectors.backend import backend_writable
from explainer.selectors.library import question_route, thread_route
from model_worker.contract.events import Topic, TopicRef
from model_worker.contract.pages import BackendCapabilities


class NoPlan(Exception):
    """The question cannot be planned: `code` is `cannot_revise` (the thread's class page was removed) or
    `bad_field` (the learner picked a topic the library does not have)."""

    def __init__(self, code: str, picked: str | None = None):
        super().__init__(code)
        self.code, self.picked = code, picked


def answer_plan_for(*, question: str, lang: str, features: BackendCapabilities, thread: Thread | None = None,
                    picked: str | None = None, exemplar: str | None = None, classroom=None) -> AnswerPlan:
    """The plan of a question (`picked`: a topic the learner chose; `exemplar`: a class topic's pinned page);
    raises `NoPlan`."""
    route = None
    if thread is not None and thread.topic_slug:
        route = thread_route(slug=thread.topic_slug, lang=lang, classroom=classroom)
        if route is None and not features.open_domain:
            # The class page the thread is about was removed: routing the follow-up's words again would
            # answer it with a page on some other topic.
            raise NoPlan("cannot_revise")
    elif exemplar or picked:
        route = question_route(question=question, lang=lang, picked=exemplar or picked, classroom=classroom)
        if route is None and picked and not exemplar:
            raise NoPlan("bad_field", picked)
    if route is None:
        route = question_route(question=question, lang=lang, classroom=classroom)
    open_domain = features.open_domain
    return answer_plan(route, open_domain=open_domain, writable=None if open_domain else backend_writable())


def thread_answer_plan(*, question: str, lang: str, thread: Thread, features: BackendCapabilities,
                       classroom=None) -> AnswerPlan:
    """The plan of a new generation in a thread that already has its topic (a repair, a reloaded view): the
    thread's topic, in the language its page is written in, as the thread's first question was asked."""
    return answer_plan_for(question=question, lang=lang, features=features, thread=thread, classroom=classroom)


def topic_event(plan: AnswerPlan, *, question: str | None = None) -> Topic:
    """The `topic` event of a plan (docs/protocol.md): what the router understood, before any draft. A page an
    open-domain model writes for `question` says it answers the question, its grounding a related lesson."""
    page = plan.route.page
    answers = related = None
    if plan.for_question and question:
        answers = question
        grounding = page or next((p for p in plan.route.nearest if p.slug == plan.topic), None)
        related = TopicRef(slug=grounding.slug, title=grounding.title) if grounding else None
    return Topic(
        slug=page.slug if page else None, title=page.title if page else None, lang=plan.lang,
        score=plan.route.score, nearest=nearest_refs(plan), source=plan.source, answers=answers, related=related,
    )


def nearest_refs(plan: AnswerPlan) -> tuple[TopicRef, ...]:
    return tuple(TopicRef(slug=p.slug, title=p.title) for p in plan.route.nearest)

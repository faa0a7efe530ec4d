"""A learner opens a library lesson from /library/: a new thread whose version 1 is the stored page, "From the
library", answered at once as a stored page answers a question, render check and all."""

from __future__ import annotations

from django.db import transaction

from explainer.library.router import AnswerPlan
from explainer.models import Generation, Learner, Thread
from explainer.selectors.answer_plan import topic_event
from explainer.selectors.library import library_index, library_page_html, question_route
from explainer.services import rate_limits
from explainer.services.finishing import generation_answer_stored


class LessonUnknown(Exception):
    """The learner's library has no such page (or only in a language their class does not ask in)."""


def lesson_open(*, slug: str, session_key: str, learner: Learner | None = None,
                client: rate_limits.Client | None = None) -> Thread:
    """Open the library page `slug` as a new thread of this browser, counted as a question (it costs a
    render check like one); raises `LessonUnknown`, `rate_limits.RateLimited` or `LimitsUnavailable`."""
    classroom = learner.classroom if learner else None
    page = library_index(classroom=classroom).by_slug.get(slug)
    if page is None or page.source == "topic":
        raise LessonUnknown(slug)
    if classroom is not None and classroom.languages and page.lang not in classroom.languages:
        raise LessonUnknown(slug)
    html = library_page_html(slug=slug, classroom=classroom)
    if html is None:
        raise LessonUnknown(slug)
    rate_limits.question_count(client=client or rate_limits.Client(session_key=session_key), learner=learner)
    route = question_route(question=page.title, lang=page.lang, picked=slug, classroom=classroom)
    topic = topic_event(AnswerPlan(refuse=False, topic=slug, lang=page.lang, route=route, source="library"))
    with transaction.atomic():
        # The thread keeps the page's topic, so a follow-up goes on from it as from an answer to a question.
        thread = Thread.objects.create(session_key=session_key, learner=learner, classroom=classroom,
                                       topic_slug=slug)
        generation = Generation.objects.create(thread=thread, learner=learner, classroom=classroom,
                                               question=page.title, lang=page.lang, kind=Generation.Kind.ASK)
        generation_answer_stored(generation, html, {"source": "library", "library_page": slug}, topic)
    return thread

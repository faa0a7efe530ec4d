"""Route a question to a library topic, or say that none fits, before any model runs.

`route_question` ranks the topics (`LibraryIndex.scores`) and keeps the best one when its score
reaches the threshold; the page to write is that topic's page in the asked language, else its page
in the other language. `answer_plan` then decides, from what the backend can do, what the model is
asked for and what the learner is told.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from explainer.library.index import LibraryIndex, TopicScore
from explainer.library.records import LibraryPage

# Calibrated on the calibration half of tests/data/router_questions.json with the default index recipe:
# the lowest threshold that routes none of its out-of-library questions (`manage.py relevance`,
# docs/benchmarks.md).
DEFAULT_THRESHOLD = 0.46  # words, sentence similarity and the outside set, calibrated on the 160-page library (docs/benchmarks.md, Router)
NEAREST = 3
# A topic is offered among the nearest only above this nearness: on the question set, 17 of the 18 in-library
# questions below the threshold still find their topic among the three offered (docs/benchmarks.md, Router).
NEAREST_FLOOR = 0.1
# A refused question whose nearest topic comes at least this near may still be on it: the refusal says the
# router could not tell, rather than that the library has no page, and offers that topic first. Below it the
# library most likely has nothing on the question. It changes the refusal's words, never what gets a page. Set
# while reading the fresh-2 split of the question set (docs/benchmarks.md, Router): there 41 of its 49 refused
# in-library questions are refused as unsure with their topic offered first, and 11 of its 29
# refused out-of-library questions are refused as unsure (the calibration half: 19 of 50).
UNSURE_FLOOR = 0.3
# A routed question this little above the threshold is not sure of its topic either: with an open-domain backend it
# is put to the model as an unsure one is (`second_opinion_lesson`). "What makes lightning?", routed to the page on
# sound at 0.49, is such a question.
SECOND_OPINION_MARGIN = 0.05


@dataclass(frozen=True)
class Route:
    lang: str  # the language the question was asked in
    page: LibraryPage | None  # the page on the question's topic, None when no topic reaches the threshold
    score: float | None  # the best topic's score; None when the learner picked the topic
    nearest: tuple[LibraryPage, ...]  # up to NEAREST topics whose nearness is above NEAREST_FLOOR, nearest first
    nearness: float | None = None  # the nearest topic's nearness (`TopicScore.nearness`); None when picked

    @property
    def inside(self) -> bool:
        return self.page is not None

    @property
    def unsure(self) -> bool:
        """No topic reaches the threshold, but the nearest comes close enough that it may be the one."""
        return self.page is None and (self.nearness or 0.0) >= UNSURE_FLOOR

    @property
    def other_language(self) -> bool:
        """The topic has no page in the asked language: the page offered is in the other one."""
        return self.page is not None and self.page.lang != self.lang


def topic_page(index: LibraryIndex, topic: str, lang: str) -> LibraryPage:
    """The topic's page in `lang`, else its first page in another language."""
    pages = index.topics[topic]
    return next((p for p in pages if p.lang == lang), pages[0])


def by_nearness(ranked: list[TopicScore]) -> list[TopicScore]:
    """Topics nearest first (ties by name): the order the nearest are offered in, whatever the outside set took."""
    return sorted(ranked, key=lambda s: (-s.nearness, s.topic))


def route_question(index: LibraryIndex, question: str, lang: str, *, threshold: float = DEFAULT_THRESHOLD) -> Route:
    """The library topic of a question, or none, with the nearest topics either way."""
    ranked = index.scores(question)
    # The nearest topics are offered by nearness: a question the outside set refuses still gets what the
    # library has closest.
    near = by_nearness(ranked)
    nearest = tuple(topic_page(index, s.topic, lang) for s in near[:NEAREST] if s.nearness > NEAREST_FLOOR)
    best = ranked[0]
    page = topic_page(index, best.topic, lang) if best.score >= threshold else None
    return Route(lang=lang, page=page, score=best.score, nearest=nearest, nearness=near[0].nearness)


def route_to_page(index: LibraryIndex, slug: str, lang: str) -> Route | None:
    """The route to a topic the learner picked by its page's slug (a nearest topic they clicked)."""
    page = index.by_slug.get(slug)
    if page is None:
        return None
    page = topic_page(index, page.topic, lang)
    return Route(lang=lang, page=page, score=None, nearest=(page,))


@dataclass(frozen=True)
class AnswerPlan:
    refuse: bool  # no page: the backend writes only library topics and none fits
    topic: str | None  # `PageRequest.topic`: the slug of the page to write, or to ground on
    lang: str  # `PageRequest.lang`: the language the page will be in
    route: Route  # what the router understood: its page (or none), score and nearest topics
    source: str = "model"  # "model": the backend writes the page | "library": the stored page is the answer
    unsure: bool = False  # refused, but the nearest topic may be the one (`Route.unsure`)
    # An open-domain backend writes the page for the question itself: the library page (`topic`) is only the
    # lesson it is grounded on, a related lesson to the learner, never the page's subject.
    for_question: bool = False

    @property
    def from_library(self) -> bool:
        return self.source == "library"


def served_from_library(page: LibraryPage, *, open_domain: bool, writable: frozenset[str] | None) -> bool:
    """A library-only backend cannot write this page (a page its checkpoint never learned, or a class's
    own page), so the stored page answers rather than a page on another topic."""
    if open_domain:
        return False
    return page.source != "corpus" or (writable is not None and page.slug not in writable)


def answer_plan(route: Route, *, open_domain: bool, writable: frozenset[str] | None = None) -> AnswerPlan:
    """What to ask the backend for. A library-only backend writes the topic's page, in the page's own
    language when the asked one has none, and refuses below the threshold; a page it cannot write
    (`writable`: the page slugs it can, None for all) is answered with the stored page itself. An
    open-domain backend writes every question in its language, grounded on the nearest library page."""
    if open_domain:
        grounding = route.page or (route.nearest[0] if route.nearest else None)
        lang = route.lang
    else:
        grounding = route.page
        lang = route.page.lang if route.page else route.lang
    source = "library" if route.page and served_from_library(route.page, open_domain=open_domain,
                                                                writable=writable) else "model"
    return AnswerPlan(
        refuse=grounding is None and not open_domain,
        topic=grounding.slug if grounding else None,
        lang=lang,
        route=route,
        source=source,
        unsure=route.unsure,
        for_question=open_domain and source == "model",
    )


def second_opinion_lesson(plan: AnswerPlan, *, threshold: float = DEFAULT_THRESHOLD) -> LibraryPage | None:
    """The lesson an open-domain backend would ground a new question on when the router is unsure of it: the
    nearest topic of an unsure route (`Route.unsure`), or a topic routed by less than `SECOND_OPINION_MARGIN`
    above the threshold. None for a sure route, a picked topic, or a page not written for the question."""
    route = plan.route
    if not plan.for_question or plan.topic is None or route.score is None:
        return None
    if route.page is not None:
        return route.page if route.score < threshold + SECOND_OPINION_MARGIN else None
    nearest = next((p for p in route.nearest if p.slug == plan.topic), None)
    return nearest if route.unsure else None


def without_lesson(plan: AnswerPlan) -> AnswerPlan:
    """The plan once the model said its lesson does not answer the question: the page is written for the question
    alone, and the lesson (in either language) is neither its grounding nor offered among the nearest."""
    lesson = plan.route.page or next((p for p in plan.route.nearest if p.slug == plan.topic), None)
    if lesson is None:
        return plan
    nearest = tuple(p for p in plan.route.nearest if p.topic != lesson.topic)
    return replace(plan, topic=None, route=replace(plan.route, page=None, nearest=nearest))

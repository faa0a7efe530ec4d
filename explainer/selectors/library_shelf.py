"""The library as a learner browses it at /library/: a card per topic, grouped by subject, filtered by grade
and curriculum point, and searched with the router's own scores, so a search finds what a question would."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

from explainer.library.records import LibraryPage
from explainer.library.router import DEFAULT_THRESHOLD, NEAREST, NEAREST_FLOOR, UNSURE_FLOOR, by_nearness
from explainer.library.text import clean_question, has_content
from explainer.selectors.exemplars import exemplar_page
from explainer.selectors.library import library_index
from explainer.selectors.library_thumbnails import thumbnails_made
from model_worker.corpus import GRADE_BAND, NGSS_CODE, SUBJECTS

CLASS_SHELF = "class"  # the group of a class's own pages, shown before the subjects
SEARCH_RESULTS = 12  # at most this many cards for a search


@dataclass(frozen=True)
class Card:
    """One topic: its page in the interface's language (else its only one), and the other language's page."""

    topic: str
    page: LibraryPage
    other: LibraryPage | None
    subject: str  # one of the corpus's SUBJECTS, or "" for a page only a class has
    grade: str  # a band of school grades, "6-8"; "" when the page says none
    curriculum: tuple[str, ...]
    thumbnail: bool  # the page has been pictured (else the placeholder stands in)
    own: bool  # a page the learner's class added

    def in_grade(self, grade: int) -> bool:
        band = GRADE_BAND.fullmatch(self.grade)
        return band is not None and int(band[1]) <= grade <= int(band[2])


@dataclass(frozen=True)
class Shelf:
    groups: list[tuple[str, list[Card]]]  # (CLASS_SHELF or a subject, its cards by title); the class's first
    results: list[Card] | None  # a search's cards, best first; None when nothing was searched
    query: str  # the search as it was scored (cleaned and cut to the question limit)
    grades: list[int] = field(default_factory=list)  # every grade a page is for, for the filter
    codes: list[str] = field(default_factory=list)  # every curriculum point, NGSS codes first
    total: int = 0  # topics on the shelf before filtering


def library_shelf(*, lang: str, classroom=None, query: str = "", grade: int | None = None,
                  code: str = "") -> Shelf:
    """The shelf for a learner (their class's library with `classroom`), in interface language `lang`."""
    cards = _cards(lang=lang, classroom=classroom)
    shown = [c for c in cards if (grade is None or c.in_grade(grade)) and (not code or code in c.curriculum)]
    query = _searchable(query)
    results = _search(query, shown, classroom) if query else None
    groups = [(CLASS_SHELF, [c for c in shown if c.own])]
    groups += [(subject, [c for c in shown if c.subject == subject and not c.own]) for subject in SUBJECTS]
    groups += [("", [c for c in shown if not c.own and c.subject not in SUBJECTS])]
    return Shelf(
        groups=[(name, sorted(group, key=lambda c: c.page.title.casefold())) for name, group in groups if group],
        results=results,
        query=query,
        grades=sorted({g for c in cards if (band := GRADE_BAND.fullmatch(c.grade))
                       for g in range(int(band[1]), int(band[2]) + 1)}),
        codes=sorted({p for c in cards for p in c.curriculum}, key=lambda p: (not NGSS_CODE.fullmatch(p), p)),
        total=len(cards),
    )


def _cards(*, lang: str, classroom) -> list[Card]:
    allowed = set(classroom.languages) if classroom is not None and classroom.languages else None
    pictured = thumbnails_made(classroom=classroom)
    cards = []
    for topic, pages in library_index(classroom=classroom).topics.items():
        # A class's curated topic has no page to open; a language the class does not ask in is left out.
        pages = [p for p in pages if p.source != "topic" and (allowed is None or p.lang in allowed)]
        if not pages:
            continue
        page = next((p for p in pages if p.lang == lang), pages[0])
        other = next((p for p in pages if p.lang != page.lang), None)
        # Subject, grade and curriculum are the corpus records'; a class page on a corpus topic takes them.
        meta = next((m for m in map(exemplar_page, (p.slug for p in pages)) if m is not None), None)
        cards.append(Card(
            topic=topic, page=page, other=other, subject=meta.subject if meta else "",
            grade=meta.grade if meta else "", curriculum=tuple(meta.curriculum) if meta else (),
            thumbnail=page.slug in pictured, own=any(p.source == "class" for p in pages),
        ))
    return cards


def _searchable(query: str) -> str:
    """The search as the router reads a question (tags and control tokens out), at most a question long;
    "" when nothing is left to search for."""
    query = clean_question(query or "")[: settings.QUESTION_MAX_CHARS].strip()
    return query if has_content(query) else ""


def _search(query: str, cards: list[Card], classroom) -> list[Card]:
    """The cards the router would offer for the query as a question, best first: the topic it routes to,
    the nearest topics a refusal would offer, and every other topic near enough that it may be the one."""
    ranked = library_index(classroom=classroom).scores(query)
    near = by_nearness(ranked)
    routed = ranked[:1] if ranked and ranked[0].score >= DEFAULT_THRESHOLD else []
    close = [s for n, s in enumerate(near)
             if (n < NEAREST and s.nearness > NEAREST_FLOOR) or s.nearness >= UNSURE_FLOOR]
    by_topic = {c.topic: c for c in cards}
    found = [by_topic[t] for t in dict.fromkeys(s.topic for s in routed + close) if t in by_topic]
    return found[:SEARCH_RESULTS]

"""A class's curated topics as topics of the library router's index, beside the library's pages.

A class topic is one more record (`source="topic"`): its title, its seed questions in either language,
and the teacher's note as its intro. The library pages pinned to it (the topic's exemplar, with the
other language's page of that library topic) move under its key, so the topic speaks with their
questions and text too. Every other page stays as it is: the router scores the class topics against the
whole library (the rarity of a word, the outside set), and `router.choose_topic` decides among them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from explainer.library.records import LibraryPage
from explainer.library.text import question_language


@dataclass(frozen=True)
class ClassTopic:
    key: str  # its topic key in the index (`topic_key`)
    title: str
    questions: tuple[str, ...] = ()  # the seed questions, English and Chinese
    note: str = ""  # the teacher's note to the model
    pinned: tuple[str, ...] = ()  # slugs of library pages pinned to it


_KEY_PREFIX = "class-topic:"


def topic_key(topic_id: int) -> str:
    """A class topic's key: a colon, which no library topic key holds, keeps it apart from them."""
    return f"{_KEY_PREFIX}{topic_id}"


def topic_id_of(key: str) -> int | None:
    """The class topic id a key names (a nearest class topic the learner picked), None for any other key."""
    rest = key[len(_KEY_PREFIX):] if key.startswith(_KEY_PREFIX) else ""
    return int(rest) if rest.isascii() and rest.isdigit() else None


def topic_record(topic: ClassTopic) -> LibraryPage:
    """The class topic as a library record of its own, with no page behind it."""
    questions = [(question_language(q)[0], q) for q in topic.questions if q.strip()]
    return LibraryPage(
        slug=topic.key,
        topic=topic.key,
        title=topic.title,
        lang=question_language(topic.title)[0] or "en",
        questions_en=tuple(q for lang, q in questions if lang != "zh"),
        questions_zh=tuple(q for lang, q in questions if lang == "zh"),
        intro=topic.note,
        source="topic",
    )


def with_class_topics(pages: Iterable[LibraryPage], topics: Iterable[ClassTopic]) -> tuple[LibraryPage, ...]:
    """The library's pages and the class's topics as one index's records: each topic's record, and each
    pinned page's library topic moved under the class topic (a library topic pinned by two class topics
    joins the first)."""
    pages, topics = tuple(pages), tuple(topics)
    library_topic = {p.slug: p.topic for p in pages}
    moved: dict[str, str] = {}
    for topic in topics:
        for slug in topic.pinned:
            if slug in library_topic:
                moved.setdefault(library_topic[slug], topic.key)
    kept = tuple(dataclasses.replace(p, topic=moved[p.topic]) if p.topic in moved else p for p in pages)
    return kept + tuple(topic_record(t) for t in topics)

"""A question's class topic: the library router's choice among the class's curated topics.

The class's topics are indexed beside its library (the corpus and the pages its teachers added) by
`explainer.library.class_topics`, and `explainer.library.choice` decides among them with the router's
threshold and unsure band (docs/teacher.md, "Class topics").
"""

from __future__ import annotations

from dataclasses import dataclass

from explainer.library.choice import choose_topic
from explainer.library.class_topics import ClassTopic, topic_id_of, topic_key, with_class_topics
from explainer.models import Classroom, Topic
from explainer.selectors.library import index_for, library_pages


@dataclass(frozen=True)
class ClassTopicChoice:
    topic: Topic | None  # the class topic the question is on, None when none reaches the threshold
    nearest: tuple[Topic, ...]  # up to three class topics nearest the question, nearest first
    unsure: bool  # no topic reached the threshold, but the nearest may be the one (`TopicChoice.unsure`)
    score: float  # the best class topic's score


NO_CHOICE = ClassTopicChoice(topic=None, nearest=(), unsure=False, score=0.0)


def class_topic(row: Topic) -> ClassTopic:
    """A class topic as the router indexes it: title, seed questions, note, and its pinned exemplar page."""
    return ClassTopic(
        key=topic_key(row.pk),
        title=row.title,
        questions=tuple(q for q in row.seed_questions if isinstance(q, str)),
        note=row.note_to_model,
        pinned=(row.exemplar,) if row.exemplar else (),
    )


def class_topic_choice(*, classroom: Classroom | None, question: str) -> ClassTopicChoice:
    """The class topic the question is on (or none), with the nearest topics; NO_CHOICE without topics."""
    rows = list(classroom.topics.all()) if classroom is not None else []
    if not rows:
        return NO_CHOICE
    by_key = {topic_key(row.pk): row for row in rows}
    # Cached by its records, as the class's library is: a topic the teacher edits makes a new index.
    index = index_for(with_class_topics(library_pages(classroom=classroom), (class_topic(r) for r in rows)))
    choice = choose_topic(index, question, by_key)
    return ClassTopicChoice(
        topic=by_key[choice.topic] if choice.topic else None,
        nearest=tuple(by_key[key] for key in choice.nearest),
        unsure=choice.unsure,
        score=choice.score,
    )


def class_topic_for(*, classroom: Classroom | None, question: str) -> Topic | None:
    """The class's own topic the question is on, or None (no class, no topics, or none chosen)."""
    return class_topic_choice(classroom=classroom, question=question).topic


def picked_class_topic(*, classroom: Classroom | None, key: str | None) -> Topic | None:
    """The class topic a learner picked from an unsure refusal's nearest (`topic_key`), if it is the class's."""
    topic_id = topic_id_of(key) if key else None
    if classroom is None or topic_id is None:
        return None
    return classroom.topics.filter(pk=topic_id).first()

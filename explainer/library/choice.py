"""A question's class topic: the library router's decision among a class's curated topics.

The index holds the library's pages and the class's topics (`explainer.library.class_topics`). Only the
class topics compete: a class topic is broader than a library page ("The solar system" beside the pages on
Mars, Saturn and eclipses), so a question on it often scores higher on one of those pages, yet it is still on
the class's topic. The library's pages weigh in through the scores themselves: a word many pages share counts
for little, and a question closer to the outside set than to a topic loses its score. The best class topic
is the question's when its score reaches the router's threshold; below it, the router's unsure band says
whether the nearest class topics are worth offering.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from explainer.library.index import LibraryIndex
from explainer.library.router import DEFAULT_THRESHOLD, NEAREST, NEAREST_FLOOR, UNSURE_FLOOR, by_nearness


@dataclass(frozen=True)
class TopicChoice:
    topic: str | None  # the class topic's key, None when none reaches the threshold
    score: float  # the best class topic's score
    nearest: tuple[str, ...]  # up to NEAREST class topic keys whose nearness is above NEAREST_FLOOR, nearest first
    nearness: float  # the nearest class topic's nearness (`TopicScore.nearness`)

    @property
    def unsure(self) -> bool:
        """No class topic reaches the threshold, but the nearest comes close enough that it may be the one."""
        return self.topic is None and self.nearness >= UNSURE_FLOOR


def choose_topic(index: LibraryIndex, question: str, topics: Collection[str], *,
                 threshold: float = DEFAULT_THRESHOLD) -> TopicChoice:
    """The class topic among `topics` (keys of the index) that the question is on, or none, with the nearest."""
    ranked = [s for s in index.scores(question) if s.topic in topics]
    if not ranked:
        return TopicChoice(topic=None, score=0.0, nearest=(), nearness=0.0)
    near = by_nearness(ranked)
    best = ranked[0]
    return TopicChoice(
        topic=best.topic if best.score >= threshold else None,
        score=best.score,
        nearest=tuple(s.topic for s in near[:NEAREST] if s.nearness > NEAREST_FLOOR),
        nearness=near[0].nearness,
    )

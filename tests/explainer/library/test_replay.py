"""Learning replayed on labelled questions (`manage.py relevance --replay`): what a learner's pick and a teacher's
wrong page teach the router, and what the router then does with the same questions."""

from __future__ import annotations

import pytest

from explainer.library.calibration import LabelledQuestion, verdicts
from explainer.library.replay import index_with, replay_learned
from explainer.library.router import DEFAULT_THRESHOLD


@pytest.fixture(scope="module")
def index():
    from explainer.selectors.library import index_for, library_pages

    return index_for(library_pages())


def q(question: str, topic: str) -> LabelledQuestion:
    return LabelledQuestion(lang="en", question=question, topic=topic, split="near-miss")


def test_picks_and_wrong_pages_replayed_route_the_same_questions_right(index):
    firsts = [
        q("why won't wet wood catch fire at camp", "combustion"),  # refused as unsure, its topic offered first
        q("Why does a compass needle point north?", "earth-core"),  # a topic the library lacks, routed to magnetism
        q("How do magnets attract iron?", "magnetism"),  # already right
    ]
    learned, taught = replay_learned(index, firsts, DEFAULT_THRESHOLD)
    assert taught == {"picked": 1, "pointed": 0, "wrong_page": 1, "nothing": 1}
    assert learned.variants == (("combustion", "why won't wet wood catch fire at camp"),)
    assert learned.wrong == (("magnetism", "Why does a compass needle point north?"),)

    before = verdicts(index, firsts)
    after = verdicts(index_with(index, learned), firsts)
    assert [v.routed(DEFAULT_THRESHOLD) for v in before] == [False, True, True]
    assert [(v.topic, v.routed(DEFAULT_THRESHOLD)) for v in after][0] == ("combustion", True)
    assert not after[1].routed(DEFAULT_THRESHOLD) and "magnetism" not in after[1].offered
    assert (after[2].topic, after[2].routed(DEFAULT_THRESHOLD)) == ("magnetism", True)

"""Learning replayed on the question set's near-miss pairs (`manage.py relevance --replay`, docs/benchmarks.md).

Each pair's first question is asked of the router as it is, and met as the app meets it:
- refused as unsure with its topic among those offered: the learner picks it (a learned variant);
- refused otherwise, though the library has its topic: it is a requested topic, and the teacher answers it
  with that topic's page (a variant);
- answered with a page on another topic: the teacher says "wrong page" (and, when the library has its topic,
  answers the requested topic with that topic's page);
- answered with its own topic's page, or refused with no topic for it: nothing to learn.
The router with what it learned (`explainer.library.learned`) is then asked every question of the set again:
the firsts (the same questions), the seconds (paraphrases nobody acted on) and the other splits (which must
not fall).
"""

from __future__ import annotations

from explainer.library.calibration import LabelledQuestion, verdicts
from explainer.library.index import LibraryIndex
from explainer.library.learned import Learned, with_variants
from explainer.library.router import topic_page


def replay_learned(index: LibraryIndex, firsts: list[LabelledQuestion], threshold: float) -> tuple[Learned, dict]:
    """What learners and teachers would teach the router from the first questions, and how many of each."""
    variants: list[tuple[str, str]] = []
    wrong: list[tuple[str, str]] = []
    acts = {"picked": 0, "pointed": 0, "wrong_page": 0, "nothing": 0}
    for v in verdicts(index, firsts):
        q = v.question
        expected = sorted(v.expected)
        if v.routed(threshold) and not v.right_topic:
            wrong.append((topic_page(index, v.topic, q.lang).slug, q.question))
            acts["wrong_page"] += 1
            if expected:  # the requested topic it becomes, answered with its page
                variants.append((topic_page(index, expected[0], q.lang).slug, q.question))
                acts["pointed"] += 1
        elif not v.routed(threshold) and expected:
            picked = next((t for t in v.offered if t in v.expected), None) if v.unsure(threshold) else None
            variants.append((topic_page(index, picked or expected[0], q.lang).slug, q.question))
            acts["picked" if picked else "pointed"] += 1
        else:
            acts["nothing"] += 1
    return Learned(variants=tuple(variants), wrong=tuple(wrong)), acts


def index_with(index: LibraryIndex, learned: Learned) -> LibraryIndex:
    """The index with what the router learned, as `selectors.library.library_index` builds it."""
    return LibraryIndex(with_variants(index.pages, learned.variants), index.recipe, wrong=learned.wrong)

"""How well "outside the topic space" is decided, measured on a labelled set of English and Chinese questions.

The threshold was chosen on the `dev` split; the `test` split was not looked at while choosing it.
Run with `-s` to see the figures quoted in docs/teacher.md.
"""

import json
from pathlib import Path

import pytest

from explainer.selectors.topic_space import DEFAULT_THRESHOLD, TopicDoc, TopicIndex, features

DATA = json.loads((Path(__file__).parent / "data" / "topic_space.json").read_text(encoding="utf-8"))


def index() -> TopicIndex:
    docs = [TopicDoc(i, t["title"], (t["title"], *t["seed_questions"], t["note_to_model"]))
            for i, t in enumerate(DATA["topics"])]
    return TopicIndex(docs)


def measure(split: str) -> dict:
    idx = index()
    inside = [idx.match(q).inside for q in DATA[split]["inside"]]
    outside = [idx.match(q).inside for q in DATA[split]["outside"]]
    tp, fp = sum(inside), sum(outside)
    figures = {
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / len(inside),
        "outside_refused": 1 - fp / len(outside),
        "n_inside": len(inside),
        "n_outside": len(outside),
    }
    print(f"\n{split} @ threshold {DEFAULT_THRESHOLD}: " + ", ".join(
        f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()))
    return figures


@pytest.mark.parametrize("split, min_precision, min_recall", [("dev", 0.95, 0.80), ("test", 0.85, 0.80)])
def test_inside_questions_are_kept_and_outside_ones_refused_on_the_labelled_set(split, min_precision, min_recall):
    figures = measure(split)
    assert figures["precision"] >= min_precision
    assert figures["recall"] >= min_recall


def test_a_question_in_the_other_language_matches_through_its_seed_questions():
    idx = index()
    assert idx.match("指南针是怎样工作的？").title == "Magnetism"
    assert idx.match("How does a compass needle find north?").title == "Magnetism"


def test_question_words_alone_carry_no_topic():
    assert not features("What is it? Why? How?")
    assert not index().match("为什么？怎么样？").inside

"""The question set's near-miss split: whole pairs of neighbours and far-words questions, ready to teach and measure."""

from __future__ import annotations

import json

import pytest

from explainer.library.calibration import load_question_set
from explainer.library.near_miss import near_miss_pairs
from explainer.library.records import corpus_records


def test_the_near_miss_split_is_whole_pairs_of_both_kinds_in_both_languages():
    labelled = load_question_set()
    pairs = near_miss_pairs(labelled)
    library = {p.topic for p in corpus_records()}
    assert sum(q.split == "near-miss" for q in labelled) == 2 * sum(len(p) for p in pairs.values())
    for kind, rows in pairs.items():
        assert 25 <= len(rows) <= 35, kind
        firsts = [first for first, _ in rows]
        for lang in ("en", "zh"):  # half English, half Chinese
            assert abs(sum(q.lang == lang for q in firsts) - len(rows) / 2) <= 3, (kind, lang)
        for first, second in rows:
            # The paraphrase is the same question in the same language, in other words.
            assert (first.half, second.half) == ("first", "second") and first.pair == second.pair
            assert first.lang == second.lang and first.question != second.question
    for first, _ in pairs["far-words"]:
        assert first.topic in library and not first.near
    # A neighbour sits next to a library topic; all but the few a page turned out to answer are outside it.
    assert all(first.near in library and second.near == first.near for first, second in pairs["neighbour"])
    outside = [first for first, _ in pairs["neighbour"] if first.topic not in library and not first.also]
    assert len(outside) >= len(pairs["neighbour"]) - 3
    assert len({first.topic for first in outside}) == len(outside)  # one subject per pair


def test_a_near_miss_question_without_its_pair_is_named(tmp_path):
    question = {"lang": "en", "question": "Why is the sea salty?", "topic": "ocean-salinity", "split": "near-miss",
                "pair": "nm-1", "half": "first", "kind": "neighbour", "near": "ocean-currents"}
    lone = tmp_path / "lone.json"
    lone.write_text(json.dumps({"questions": [question]}), encoding="utf-8")
    with pytest.raises(ValueError, match="nm-1"):
        near_miss_pairs(load_question_set(lone))
    unpaired = tmp_path / "unpaired.json"
    unpaired.write_text(json.dumps({"questions": [question | {"half": "later"}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="unpaired.json"):
        load_question_set(unpaired)

"""`manage.py relevance` reports the router's figures on the question set, and checks generated pages."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command

from explainer.library.calibration import SPLITS
from explainer.library.index import DEFAULT_RECIPE
from tests.support.net import TEST_BACKEND


def relevance(*args) -> dict:
    out = io.StringIO()
    call_command("relevance", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


# The router's index reads what it learned from the database (`selectors.learned_routes`): here, nothing.
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def report(django_db_setup, django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return relevance()


def test_the_router_figures_count_every_question_of_the_set(report):
    router, halves = report["router"], report["halves"]
    assert router["in_library"] >= 80 and router["out_of_library"] >= 20
    assert set(halves) == set(SPLITS)
    # The near-miss split is reported apart: the whole-set figures stay those of the other splits.
    assert router["in_library"] == sum(h["in_library"] for split, h in halves.items() if split != "near-miss")
    assert halves["calibration"]["out_of_library_routed"] == 0
    assert router["routed_right"] <= router["routed"] and 0 < router["recall"] <= router["precision"] <= 1
    assert report["calibrated_threshold"] == router["threshold"]
    assert len(report["misses"]) == (router["in_library"] - router["routed_right"]
                                     + router["out_of_library_routed"])


def test_the_near_miss_split_is_reported_by_kind_and_half_with_the_commit(report):
    assert re.fullmatch(r"[0-9a-f]{4,40}|unknown", report["commit"])
    near_miss, half = report["near_miss"], report["halves"]["near-miss"]
    questions = near_miss["questions"]
    assert len(questions) == half["in_library"] + half["out_of_library"] >= 100
    assert {(q["kind"], q["half"]) for q in questions} == {(k, h) for k in ("neighbour", "far-words")
                                                             for h in ("first", "second")}
    neighbour, far = near_miss["neighbour"], near_miss["far-words"]
    # Every question has one fate, and the figures are their counts.
    outcomes = {kind: [q["outcome"] for q in questions if q["kind"] == kind and (kind == "far-words" or not q["expected"])]
                for kind in ("neighbour", "far-words")}
    assert neighbour["out_of_library"] == len(outcomes["neighbour"]) >= 25
    assert [neighbour[k] for k in ("refused", "routed_to_near", "routed_elsewhere")] == [
        outcomes["neighbour"].count(k) for k in ("refused", "routed_to_near", "routed_elsewhere")]
    assert neighbour["refused"] + neighbour["routed_to_near"] + neighbour["routed_elsewhere"] == neighbour["out_of_library"]
    assert far["questions"] == len(outcomes["far-words"]) >= 50
    assert far["routed_right"] + far["unsure_offered"] + far["wrong"] + far["refused"] == far["questions"]
    assert far["unsure_first"] == outcomes["far-words"].count("unsure_first") <= far["unsure_offered"]
    # By half: each pair's first and its paraphrase are counted apart, and together make the whole.
    by_half = near_miss["by_half"]
    for kind in ("neighbour", "far-words"):
        for figure, value in near_miss[kind].items():
            assert by_half["first"][kind][figure] + by_half["second"][kind][figure] == value, (kind, figure)
    assert by_half["first"]["far-words"]["questions"] == by_half["second"]["far-words"]["questions"]


def test_recipes_are_compared_each_at_its_own_calibrated_threshold():
    rows = {row["recipe"]: row for row in relevance("--recipes")["recipes"]}
    assert {"head", "best-field", DEFAULT_RECIPE.name} <= set(rows)
    assert all(row["calibration"]["out_of_library_routed"] == 0 for row in rows.values())
    # The committed recipe beats the first router on the held-out half.
    assert rows[DEFAULT_RECIPE.name]["held-out"]["recall"] > rows["head"]["held-out"]["recall"]


@pytest.mark.django_db
def test_generate_writes_routed_pages_through_the_backend_and_checks_them(monkeypatch, tmp_path):
    monkeypatch.setenv("MODEL_BACKEND", TEST_BACKEND)
    questions = tmp_path / "set.json"
    questions.write_text(json.dumps({"questions": [
        {"lang": "en", "question": "Why does the sea rise and fall twice a day?", "topic": "tides", "split": "held-out"},
        {"lang": "en", "question": "What makes the daytime sky look blue?", "topic": "sky-blue", "split": "held-out"},
        {"lang": "en", "question": "Why do cats purr?", "topic": "cats-purring", "split": "held-out"},
    ]}), encoding="utf-8")
    generation = relevance("--generate", "--questions", str(questions))["generation"]
    # The test denoiser titles its page with the question, not the library page: off topic, right language.
    # (Only the Clover engine's checkpoint record limits what is written; the denoiser writes every topic.)
    off_topic = generation.pop("off_topic")
    assert generation.pop("failures") == []
    assert generation.pop("by_split")["held-out"] == {"in_library": 2, "on_topic": 0, "out_of_library": 1,
                                                      "answered_other_topic": 0}
    assert generation | {"seconds": 0} == {
        "in_library": 2, "pages": 2, "on_topic": 0, "promised_language": 2, "asked_language": 2, "failed": 0,
        "out_of_library": 1, "refused": 1, "answered_other_topic": 0, "from_library": 0, "seconds": 0,
        "model_pages": 2, "model_wrote_routed_page": 0,
        "backend": TEST_BACKEND,
    }
    # Each page that is not the expected topic's is listed, with what it was titled.
    assert [(o["question"], o["expected"], o["routed"], o["source"]) for o in off_topic] == [
        ("Why does the sea rise and fall twice a day?", ["tides"], "tides", "model"),
        ("What makes the daytime sky look blue?", ["sky-blue"], "sky-blue", "model"),
    ]


def test_a_malformed_question_set_is_named(tmp_path):
    from django.core.management.base import CommandError

    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(CommandError, match="bad.json"):
        relevance("--questions", str(bad))

"""How well the router files class questions under a class's topics, on labelled English and Chinese questions.

The figures are those docs/teacher.md quotes (`scripts/topic_space_compare.py` prints them beside the old
matcher's); neither set was used to tune the router.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from explainer.management.commands.demo_data import DEMO_TOPICS

COMPARE_PY = Path(__file__).resolve().parents[3] / "scripts" / "topic_space_compare.py"


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("topic_space_compare_under_test", COMPARE_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture(scope="module")
def router_figures(compare):
    return {name: compare.figures(questions, compare.router_answers(topics, questions))
            for name, (topics, questions) in compare.question_sets().items()}


@pytest.mark.parametrize("name", ["topic_space.json dev", "topic_space.json test", "class_questions.json"])
def test_a_question_filed_under_a_class_topic_is_almost_always_on_it(router_figures, name):
    assert router_figures[name].precision >= 0.95


@pytest.mark.parametrize("name", ["topic_space.json dev", "topic_space.json test", "class_questions.json"])
def test_an_inside_question_is_filed_under_its_topic_or_offered_it_first(router_figures, name):
    f = router_figures[name]
    assert (f.kept_right + f.unsure_right_first) / f.inside >= 0.9


def test_near_misses_beside_a_topic_are_filed_under_none(router_figures):
    f = router_figures["class_questions.json"]
    refused, near = map(int, f.near_refused.split("/"))
    assert refused >= near - 1 and f.others_refused >= 0.95


def test_the_class_question_set_is_asked_in_the_demo_class():
    asked = json.loads((COMPARE_PY.parents[1] / "tests/explainer/teacher/data/class_questions.json").read_text(
        encoding="utf-8"))
    assert [(t["title"], t["seed_questions"], t["note_to_model"]) for t in asked["topics"]] == [
        (title, seeds, note) for title, seeds, note in DEMO_TOPICS]

"""Which new questions get a second opinion (the router unsure of the lesson an open-domain backend would ground
on), and what a "no" leaves of the plan: a page for the question alone, the lesson not offered as related."""

from __future__ import annotations

from dataclasses import replace

import pytest

from explainer.library.index import LibraryIndex
from explainer.library.records import corpus_records
from explainer.library.router import (
    DEFAULT_THRESHOLD,
    SECOND_OPINION_MARGIN,
    UNSURE_FLOOR,
    answer_plan,
    route_question,
    route_to_page,
    second_opinion_lesson,
    without_lesson,
)
from explainer.selectors.answer_plan import topic_event


@pytest.fixture(scope="module")
def index() -> LibraryIndex:
    return LibraryIndex(corpus_records())


def test_an_unsure_question_s_nearest_lesson_is_put_to_the_model(index):
    route = route_question(index, "How do bees make honey?", "en")
    assert route.page is None and route.nearness >= UNSURE_FLOOR
    assert second_opinion_lesson(answer_plan(route, open_domain=True)) == route.nearest[0]


def test_a_question_routed_just_above_the_threshold_is_put_to_the_model_and_a_sure_one_is_not(index):
    near = route_question(index, "Why do we see lightning before thunder?", "en")
    assert near.page is not None and near.score < DEFAULT_THRESHOLD + SECOND_OPINION_MARGIN
    assert second_opinion_lesson(answer_plan(near, open_domain=True)) == near.page
    sure = route_question(index, "Why is the sky blue?", "en")
    assert second_opinion_lesson(answer_plan(sure, open_domain=True)) is None
    at_margin = replace(near, score=DEFAULT_THRESHOLD + SECOND_OPINION_MARGIN)
    assert second_opinion_lesson(answer_plan(at_margin, open_domain=True)) is None


def test_no_lesson_is_put_to_the_model_far_from_the_library_for_a_picked_topic_or_by_the_demo(index):
    far = route_question(index, "Why do cats purr?", "en")
    assert far.nearness < UNSURE_FLOOR and second_opinion_lesson(answer_plan(far, open_domain=True)) is None
    picked = route_to_page(index, "sound", "en")
    assert second_opinion_lesson(answer_plan(picked, open_domain=True)) is None
    unsure = route_question(index, "How do bees make honey?", "en")
    assert second_opinion_lesson(answer_plan(unsure, open_domain=False)) is None  # refused with its topics offered


def test_a_no_writes_the_page_for_the_question_without_the_lesson(index):
    question = "Why do we see lightning before thunder?"
    plan = answer_plan(route_question(index, question, "en"), open_domain=True)
    assert plan.topic == "sound" and topic_event(plan, question=question).related.slug == "sound"
    refused = without_lesson(plan)
    assert refused.topic is None and refused.for_question and refused.source == "model"
    event = topic_event(refused, question=question)
    assert (event.slug, event.related, event.answers) == (None, None, question)
    assert all(ref.slug not in ("sound", "zh-sound") for ref in event.nearest) and event.score == plan.route.score


def test_a_no_on_an_unsure_lesson_grounds_on_no_other(index):
    plan = answer_plan(route_question(index, "How do bees make honey?", "en"), open_domain=True)
    refused = without_lesson(plan)
    assert refused.topic is None and plan.topic not in [p.slug for p in refused.route.nearest]
    assert topic_event(refused, question="How do bees make honey?").related is None

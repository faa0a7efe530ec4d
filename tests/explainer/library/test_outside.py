"""The outside set: questions no library page answers keep their near neighbours from getting a page."""

from __future__ import annotations

import json
import os

import pytest
from django.core.exceptions import ImproperlyConfigured

from explainer.library import outside
from explainer.library.calibration import load_question_set
from explainer.library.index import RECIPES, LibraryIndex
from explainer.library.records import LibraryPage, corpus_records
from explainer.library.router import DEFAULT_THRESHOLD, route_question
from explainer.selectors.library import library_check
from model_worker.corpus import load_pages

BEES = "How do honeybees turn flower nectar into honey?"  # the flower page's bees carry pollen; none makes honey


@pytest.fixture(scope="module")
def index() -> LibraryIndex:
    return LibraryIndex(corpus_records())


def test_the_shipped_set_holds_both_languages_and_none_of_the_librarys_or_the_question_sets_questions():
    questions = outside.outside_questions()
    entries = json.loads(outside.OUTSIDE.read_text(encoding="utf-8"))["questions"]
    assert len(questions) >= 400 and {e["lang"] for e in entries} == {"en", "zh"}
    trained = {q for page in load_pages() for _, q in page.questions}
    assert not set(questions) & trained
    assert not set(questions) & {q.question for q in load_question_set()}  # the router's measure stays blind


def test_a_question_nearer_an_outside_question_than_its_best_topic_gets_no_page(index):
    without_set = LibraryIndex(corpus_records(), RECIPES["best-field+coverage+semantic"])
    assert without_set.scores(BEES)[0].score >= DEFAULT_THRESHOLD  # meaning alone would hand out the flower page
    route = route_question(index, BEES, "en")
    assert not route.inside and route.score < DEFAULT_THRESHOLD
    best = index.scores(BEES)[0]
    assert best.outside > 0 and best.score == route.score
    # What the library has nearest is still offered, by the score before the set's share.
    assert route.nearest and route.nearest[0].topic == "plant-reproduction"
    assert max(index.scores(BEES), key=lambda s: s.nearness).nearness >= DEFAULT_THRESHOLD


def test_a_page_added_on_an_outside_subject_takes_its_questions_over(index):
    bees = LibraryPage(slug="honey-bees", topic="honey-bees", title="How bees make honey", lang="en",
                       questions_en=("How do bees make honey?", "How do honeybees turn nectar into honey?"),
                       questions_zh=("蜜蜂是怎样酿蜜的？",), tags=("bees", "honey"), source="class")
    grown = index.with_pages([bees])
    route = route_question(grown, BEES, "en")
    assert route.inside and route.page.slug == "honey-bees"
    assert grown.scores(BEES)[0].outside == 0.0


def test_the_routers_paraphrases_of_library_questions_lose_nothing_to_the_set(index):
    question = "Why can a long stick help me lift a heavy rock?"
    assert index.scores(question)[0].topic == "levers" and index.scores(question)[0].outside == 0.0


@pytest.mark.parametrize(
    ("text", "named"),
    [('{"questions": [', "outside.json"), ('{"questions": [{"lang": "fr", "question": "Pourquoi ?"}]}', "question 0"),
     ('{"questions": {"lang": "en"}}', "not a list")],
)
def test_a_malformed_set_is_refused_naming_the_file_and_the_entry(tmp_path, text, named):
    path = tmp_path / "outside.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=named) as caught:
        outside.outside_questions(path)
    assert str(path) in str(caught.value)


def test_a_corrupt_set_stops_the_app_at_start_up(tmp_path, monkeypatch):
    path = tmp_path / "outside.json"
    path.write_text("not json", encoding="utf-8")
    monkeypatch.setattr(outside, "OUTSIDE", path)
    with pytest.raises(ImproperlyConfigured, match="outside set is corrupt") as caught:
        library_check()
    assert str(path) in str(caught.value)


def test_the_set_is_read_once_while_unchanged_and_again_once_edited(tmp_path):
    path = tmp_path / "outside.json"
    path.write_text('{"questions": [{"lang": "en", "question": "How do bees make honey?"}]}', encoding="utf-8")
    first = outside.outside_questions(path)
    assert outside.outside_questions(path) is first  # no second read
    path.write_text('{"questions": [{"lang": "zh", "question": "蜜蜂怎么酿蜜？"}]}', encoding="utf-8")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert outside.outside_questions(path) == ("蜜蜂怎么酿蜜？",)
    path.unlink()
    with pytest.raises(ValueError, match="not an outside-question set"):
        outside.outside_questions(path)

"""The corpus loader reads every exemplar with its record and refuses records that would mislead training."""

from __future__ import annotations

import json
import re
import shutil
import statistics

import pytest

from model_worker.corpus import CORPUS_DIR, SUBJECTS, CorpusError, load_pages
from model_worker.corpus.coverage import (
    README,
    check_pairs,
    coverage_table,
    readme_with_table,
    topics,
    unpaired_topics,
)
from model_worker.corpus.length import TARGET_MEDIAN, token_counts

IMPORT_MAP = re.compile(r'<script type="importmap">(.*?)</script>', re.S)


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "pages").mkdir()
    return tmp_path


def write(corpus, name, **changes):
    slug = name
    record = {
        "slug": slug, "file": f"{slug}.html", "title": "T", "lang": "en", "subject": "physics",
        "tags": ["t"], "questions_en": ["Why?"], "questions_zh": ["为什么？"],
        "topic": slug.removeprefix("zh-"), "curriculum": ["MS-PS2-2", "初中物理·简单机械"], "grade": "6-8",
    } | changes
    (corpus / "pages" / f"{name}.json").write_text(json.dumps(record), encoding="utf-8")
    (corpus / "pages" / f"{name}.html").write_text("<!doctype html><html></html>", encoding="utf-8")


def test_a_record_loads_with_its_page_and_its_questions_in_both_languages(corpus):
    write(corpus, "lever", questions_en=["How does a lever work?"], questions_zh=["杠杆是怎样省力的？"])
    [page] = load_pages(corpus)
    assert page.slug == "lever"
    assert page.html.startswith("<!doctype html>")
    assert page.questions == (("en", "How does a lever work?"), ("zh", "杠杆是怎样省力的？"))


@pytest.mark.parametrize(
    "changes, problem",
    [
        ({"subject": "maths"}, "subject"),
        ({"lang": "fr"}, "lang"),
        ({"questions_zh": []}, "questions_zh"),
        ({"file": "other.html"}, "file"),
        ({"slug": "other"}, "slug"),
        ({"extra": 1}, "fields"),
        ({"topic": "Lever Arms"}, "topic"),
        ({"topic": "zh-lever"}, "topic"),
        ({"curriculum": ["MS-PS2-2"]}, "curriculum needs .* one Chinese unit"),
        ({"curriculum": ["初中物理·简单机械"]}, "curriculum needs at least one NGSS code"),
        ({"curriculum": ["MS-PS2-2", "初中物理·简单机械", "physics 101"]}, "physics 101"),
        ({"curriculum": ["MS-PS2-2", "高中物理·力"]}, "高中物理"),
        ({"grade": "middle school"}, "grade"),
        ({"grade": "9-6"}, "grade"),
    ],
)
def test_a_bad_record_is_refused_naming_its_file_and_problem(corpus, changes, problem):
    write(corpus, "lever", **changes)
    with pytest.raises(CorpusError, match=rf"lever\.json: .*{problem}"):
        load_pages(corpus)


def test_a_record_whose_title_is_not_its_page_s_title_is_refused(corpus):
    write(corpus, "lever", title="Levers")
    (corpus / "pages" / "lever.html").write_text("<!doctype html><html><head><title>Levers: the seesaw</title>",
                                                 encoding="utf-8")
    with pytest.raises(CorpusError, match=r"lever\.json: title 'Levers' is not the page's <title> 'Levers: the seesaw'"):
        load_pages(corpus)


def test_a_record_without_its_page_is_refused(corpus):
    write(corpus, "lever")
    (corpus / "pages" / "lever.html").unlink()
    with pytest.raises(CorpusError, match="lever.html does not exist"):
        load_pages(corpus)


def test_a_record_carries_its_topic_curriculum_and_grade(corpus):
    write(corpus, "zh-lever", lang="zh", grade="7-9")
    [page] = load_pages(corpus)
    assert (page.topic, page.curriculum, page.grade) == ("lever", ("MS-PS2-2", "初中物理·简单机械"), "7-9")


def test_a_second_page_of_one_topic_in_the_same_language_is_refused_naming_both(corpus):
    write(corpus, "lever")
    write(corpus, "levers", topic="lever")
    with pytest.raises(CorpusError, match=r"levers\.json: topic 'lever' already has a en page \(lever\)"):
        load_pages(corpus)


def test_a_topic_in_one_language_loads_but_fails_the_pairing_check_naming_its_page(corpus):
    write(corpus, "lever")
    write(corpus, "zh-lever", lang="zh")
    write(corpus, "pulley")
    pages = load_pages(corpus)
    assert len(pages) == 3
    assert unpaired_topics(pages) == ["pulley.json: topic 'pulley' has no zh page"]
    with pytest.raises(CorpusError, match="pulley.json: topic 'pulley' has no zh page"):
        check_pairs(pages)
    check_pairs([p for p in pages if p.topic == "lever"])


def test_the_coverage_table_lists_each_topic_once_with_both_slugs(corpus):
    write(corpus, "lever")
    write(corpus, "zh-lever", lang="zh", curriculum=["MS-PS2-2", "初中物理·杠杆"])
    table = coverage_table(load_pages(corpus))
    assert table.splitlines()[0] == "1 topics, 2 pages; 1 topics in both languages."
    assert "| lever | `lever` | `zh-lever` | MS-PS2-2, 初中物理·杠杆, 初中物理·简单机械 | 6-8 |" in table


def test_the_published_coverage_table_is_up_to_date():
    readme = README.read_text(encoding="utf-8")
    assert readme_with_table(readme, coverage_table(load_pages())) == readme, (
        "run: python -m model_worker.corpus.coverage"
    )


def test_every_shipped_topic_has_an_english_and_a_chinese_page():
    check_pairs(load_pages())


def test_the_shipped_corpus_covers_every_subject_in_both_languages():
    pages = load_pages()
    assert len(pages) >= 10
    assert {p.subject for p in pages} == set(SUBJECTS)
    assert sum(p.lang == "zh" for p in pages) >= 5
    assert all(len(p.questions_en) >= 2 and len(p.questions_zh) >= 2 for p in pages)


def test_every_shipped_page_loads_only_the_vendored_three_and_the_kit():
    expected = {
        "three": "/static/vendor/three/three.module.js",
        "three/addons/": "/static/vendor/three/addons/",
        "kit": "/static/kit/kit.js",
    }
    for page in load_pages():
        maps = IMPORT_MAP.findall(page.html)
        assert len(maps) == 1, page.slug
        assert json.loads(maps[0])["imports"] == expected, page.slug
        assert "http://" not in page.html and "https://" not in page.html, page.slug
        assert page.html.count('<script type="module">') == 1, page.slug
        lines = page.html.count("\n")
        assert 40 <= lines <= 300, f"{page.slug}: {lines} lines"


def test_a_chinese_page_is_marked_chinese_for_the_kit_and_the_browser():
    for page in load_pages():
        if page.lang == "zh":
            assert '<html lang="zh-CN">' in page.html, page.slug
            assert 'lang: "zh"' in page.html, page.slug


def test_a_copy_of_the_corpus_elsewhere_loads_the_same_pages(tmp_path):
    shutil.copytree(CORPUS_DIR / "pages", tmp_path / "pages")
    assert [p.slug for p in load_pages(tmp_path)] == [p.slug for p in load_pages()]


def library_pages():
    """Pages of topics written in both languages: the richer library standard of issue 11."""
    return [page for by_lang in topics(load_pages()).values() if len(by_lang) == 2 for page in by_lang.values()]


def test_pages_of_topics_in_both_languages_are_long_lessons_with_steps_and_a_quiz():
    pages = library_pages()
    assert pages, "at least the model topic is written in both languages"
    counts = token_counts({p.slug: p.html for p in pages})
    assert statistics.median(counts.values()) >= TARGET_MEDIAN, counts
    assert min(counts.values()) >= 1500, counts
    for page in pages:
        assert "app.quiz(" in page.html and "app.steps(" in page.html, page.slug

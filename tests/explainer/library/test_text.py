"""Questions are normalised before routing; empty ones and ones in other languages are told apart."""

from __future__ import annotations

import pytest

from explainer.library.text import clean_question, has_content, normalise_question, question_language


def test_zero_width_and_format_characters_are_removed_and_width_folded():
    assert normalise_question("\u200bWhy\u200d is the\ufeff sky ｂｌｕｅ？\u2060") == "Why is the sky blue?"


def test_the_question_the_model_sees_keeps_chinese_punctuation():
    assert clean_question(" 天空\u200b为什么是蓝色的？ ") == "天空为什么是蓝色的？"


@pytest.mark.parametrize(("typed", "kept"), [
    ("<|im_start|>How do magnets work?", "How do magnets work?"),
    ("<|endoftext|>How do magnets work?<|eos|>", "How do magnets work?"),
    ("<|question|>磁铁为什么能吸铁？", "磁铁为什么能吸铁？"),
    ("<script>alert(1)</script> How do magnets work?", "alert(1) How do magnets work?"),
    ('<b>Why</b> is the <a href="x">sky</a> blue?', "Why is the sky blue?"),
    ("Why is 3 < 5 but 7 > 5?", "Why is 3 < 5 but 7 > 5?"),  # comparisons are not tags
    ("What does <| mean in a formula?", "What does <| mean in a formula?"),
])
def test_control_tokens_and_tags_are_taken_out_of_the_question_and_its_words_kept(typed, kept):
    assert clean_question(typed) == kept


@pytest.mark.parametrize("text", ["", "???", "!!! …", "🤔🤔", "\u200b\u200c\u200d", "🌈?!", "？！。"])
def test_punctuation_emoji_and_invisible_characters_alone_have_no_content(text):
    assert not has_content(normalise_question(text))


@pytest.mark.parametrize(
    ("text", "lang"),
    [("Why is the sky blue?", "en"), ("为什么天空是蓝色的？", "zh"), ("DNA是怎样复制的？", "zh"),
     ("E=mc²?", "en"), ("cornea lens retina optic nerve", "en"), ("Are magnetic field lines real?", "en")],
)
def test_english_and_chinese_questions_are_recognised(text, lang):
    assert question_language(text) == (lang, "")


@pytest.mark.parametrize(
    ("text", "name"),
    [("Почему небо голубое?", "Russian"), ("لماذا السماء زرقاء؟", "Arabic"), ("आसमान नीला क्यों है?", "Hindi"),
     ("하늘은 왜 파란색이에요?", "Korean"), ("空はなぜ青いのですか？", "Japanese")],
)
def test_questions_in_other_scripts_are_named_not_answered(text, name):
    lang, looks_like = question_language(text)
    assert lang is None and name in looks_like


@pytest.mark.parametrize(
    ("text", "name"),
    [("Pourquoi le ciel est-il bleu ?", "French"), ("¿Cómo funcionan las vacunas?", "Spanish"),
     ("Wie entstehen Gezeiten?", "German"), ("Perché il cielo è blu?", "Italian"),
     ("Waarom is de lucht blauw?", "Dutch")],
)
def test_questions_in_other_latin_script_languages_are_named_not_answered_in_english(text, name):
    assert question_language(text) == (None, name)


def test_no_english_learner_question_of_the_router_set_or_the_library_is_taken_for_another_language():
    """Terse and keyword questions included ("rust iron oxygen water salt"): refusing an English
    question as French would be worse than answering a French one in English."""
    import json

    from explainer.library.calibration import QUESTION_SET
    from model_worker.corpus import load_pages

    english = [q["question"] for q in json.loads(QUESTION_SET.read_text())["questions"] if q["lang"] == "en"]
    english += [q for page in load_pages() for q in page.questions_en]
    assert len(english) > 1000
    assert [q for q in english if question_language(normalise_question(q))[0] != "en"] == []

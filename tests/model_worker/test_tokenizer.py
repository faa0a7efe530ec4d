"""The page tokenizer: byte-exact round trips, special tokens, loadable with AutoTokenizer."""

import pytest
from transformers import AutoTokenizer

from model_worker.clover.tokenizer import SPECIAL_TOKENS, load_tokenizer, special_ids, train_tokenizer

TEXTS = [
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Tides</title></head>\n'
    '<body><script type="module">import { scene } from "/static/kit/kit.js";\nconst moon = 1;</script>'
    "</body></html>\n"
] * 20 + ["为什么月亮会引起潮汐？", "Why does the moon cause tides?"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok")
    train_tokenizer(TEXTS, vocab_size=600).save_pretrained(str(path))
    return path


def test_a_saved_tokenizer_loads_with_auto_tokenizer_and_keeps_its_special_tokens(saved):
    tok = AutoTokenizer.from_pretrained(str(saved))
    assert tok.pad_token == "<|pad|>" and tok.mask_token == "<|mask|>" and tok.eos_token == "<|eos|>"
    assert [tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS] == list(range(len(SPECIAL_TOKENS)))


@pytest.mark.parametrize(
    "text",
    [
        "为什么天空是蓝色的？光的散射让蓝光更多地进入我们的眼睛。",
        "  <div class='x'>\n\tconst θ = 2 * Math.PI; // 🌍 \n</div>",
        "Mixed 中文 and English ☕ text",
    ],
)
def test_any_text_including_chinese_survives_encode_then_decode_byte_for_byte(saved, text):
    tok = load_tokenizer(saved)
    assert tok.decode(tok.encode(text, add_special_tokens=False)) == text


def test_special_markers_in_text_become_single_tokens(saved):
    tok = load_tokenizer(saved)
    ids = special_ids(tok)
    encoded = tok.encode("<|question|>en\nWhy?<|page|><html><|eos|>", add_special_tokens=False)
    assert encoded[0] == ids["question"] and ids["page"] in encoded and encoded[-1] == ids["eos"]


def test_the_corpus_merges_shorten_html(saved):
    tok = load_tokenizer(saved)
    assert len(tok.encode(TEXTS[0], add_special_tokens=False)) < len(TEXTS[0].encode()) / 3


def test_a_folder_without_a_tokenizer_is_refused_with_its_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        load_tokenizer(tmp_path)

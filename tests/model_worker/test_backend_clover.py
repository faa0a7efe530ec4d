"""CloverBackend end to end on a tiny random checkpoint: streaming, stopping, and clear refusals."""

import json

import pytest
import torch

from model_worker.backends.base import BackendError
from model_worker.backends.clover import CheckpointFolderError, CloverBackend, _TextStream, token_tables
from model_worker.clover.tokenizer import special_ids, train_tokenizer
from model_worker.contract.pages import PageRequest
from model_worker.worker.run import run_page

PAGE = '<!doctype html>\n<html><body><script type="module">import { start } from "kit";</script></body></html>'


def save_tiny_checkpoint(path):
    from model_worker.clover import CloverConfig, CloverForBlockDiffusion

    tok = train_tokenizer([PAGE] * 20 + ["潮汐是怎样产生的？ Why tides?"], vocab_size=400)
    ids = special_ids(tok)
    config = CloverConfig.preset("tiny", vocab_size=len(tok), mask_token_id=ids["mask"], eos_token_id=ids["eos"],
                                 pad_token_id=ids["pad"], max_position_embeddings=256, trained_block_sizes=[1, 4, 8])
    torch.manual_seed(0)
    CloverForBlockDiffusion(config).save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return path


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("clover-tiny"))


@pytest.fixture(scope="module")
def backend(checkpoint):
    return CloverBackend(path=checkpoint, device="cpu", threads=1, block_size=8, max_new_tokens=48)


class Recorder:
    def __init__(self, stop_after_commits=None):
        self.drafts, self.commits, self.tokens, self.stop_after = [], [], [], stop_after_commits

    def on_draft(self, block, pieces):
        self.drafts.append((block, pieces))

    def on_commit(self, block, text, tokens):
        self.commits.append((block, text))
        self.tokens.append(tokens)

    def should_stop(self):
        return self.stop_after is not None and len(self.commits) >= self.stop_after


def test_a_page_streams_drafts_and_one_commit_per_block_then_returns_html_and_figures(backend):
    sink = Recorder()
    result = backend.generate_page(PageRequest(question="Why are there tides?"), sink)
    assert not result.stopped
    assert sink.drafts and all(len(pieces) <= 8 for _, pieces in sink.drafts)
    assert any(None in pieces for _, pieces in sink.drafts)  # a draft shows positions still masked
    blocks = [b for b, _ in sink.commits]
    assert blocks == sorted(set(blocks)) and blocks[0] == 0
    assert result.stats["tokens"] > 0 and result.stats["forwards"] >= result.stats["tokens"] / 8
    assert sum(sink.tokens) == result.stats["tokens"]  # each commit says how many tokens it finished
    for key in ("tokens", "forwards", "tokens_per_forward", "forwards_per_s", "tokens_per_s", "first_block_s", "seconds"):
        assert key in result.stats
    assert result.html.strip() in "".join(t for _, t in sink.commits) or result.html.strip() == ""


def test_should_stop_ends_the_page_at_the_next_block_boundary(backend):
    sink = Recorder(stop_after_commits=1)
    result = backend.generate_page(PageRequest(question="潮汐是怎样产生的？", lang="zh"), sink)
    assert result.stopped and len(sink.commits) == 1
    assert result.stats["tokens"] <= 8


def test_another_decoding_takes_its_preset_and_any_setting_given_with_it(backend):
    ar = backend.with_decoding("ar", max_new_tokens=5)
    assert (ar.sampler.decoding, ar.sampler.block_size, ar.sampler.max_new_tokens) == ("ar", 1, 5)
    assert backend.with_decoding("diffusion", block_size=8).sampler.max_new_tokens == backend.sampler.max_new_tokens
    with pytest.raises(ValueError, match="unknown decoding 'greedy'"):
        backend.with_decoding("greedy")


def test_autoregressive_decoding_of_the_same_weights_takes_one_forward_per_token(backend):
    ar = backend.with_decoding("ar")
    assert ar.model is backend.model and ar.sampler.block_size == 1
    result = ar.generate_page(PageRequest(question="Why are there tides?"), Recorder())
    assert result.stats["tokens_per_forward"] == pytest.approx(1.0, abs=0.05)


def test_verified_decoding_streams_the_page_autoregressive_decoding_writes(backend):
    verified = backend.with_decoding("verified", block_size=8)
    assert verified.model is backend.model and verified.sampler.decoding == "verified"
    request = PageRequest(question="Why are there tides?")
    sink = Recorder()
    result = verified.generate_page(request, sink)
    ar = backend.with_decoding("ar").generate_page(request, Recorder())
    assert result.html == ar.html
    blocks = [b for b, _ in sink.commits]
    assert blocks == sorted(set(blocks)) and blocks[0] == 0
    assert "".join(t for _, t in sink.commits).strip().endswith(result.html.strip()[-20:])
    assert verified.with_decoding("diffusion", block_size=8).sampler.decoding == "diffusion"


def test_block_commits_never_split_a_chinese_character(checkpoint):
    from model_worker.clover.tokenizer import load_tokenizer

    tok = load_tokenizer(checkpoint)
    text = "潮汐是引力造成的。"
    ids = tok.encode(text, add_special_tokens=False)
    assert len(ids) > len(text)  # characters span several byte tokens in this vocabulary
    sink = Recorder()
    stream = _TextStream(sink, *token_tables(tok))
    for b, start in enumerate(range(0, len(ids), 3)):
        stream.block(0, b, ids[start : start + 3])
    assert "".join(t for _, t in sink.commits) == text
    assert all("\ufffd" not in t for _, t in sink.commits)


def test_the_streamed_text_is_the_decoded_text_of_the_demo_vocabulary_whatever_the_blocks():
    from model_worker.clover.tokenizer import load_tokenizer
    from model_worker.config import DEFAULT_MODEL_PATH
    from model_worker.corpus import load_pages

    tok = load_tokenizer(DEFAULT_MODEL_PATH)
    pieces, raw = token_tables(tok)
    ids = [i for page in load_pages()[:3] for i in tok.encode(page.html + "潮汐<|eos|>", add_special_tokens=False)]
    ids += list(range(len(tok)))  # every token once, the special ones and lone bytes of characters too
    for width in (1, 7, 32):
        sink = Recorder()
        stream = _TextStream(sink, pieces, raw)
        for b, start in enumerate(range(0, len(ids), width)):
            stream.block(0, b, ids[start : start + width])
        streamed = "".join(t for _, t in sink.commits)
        assert streamed == tok.decode(ids, skip_special_tokens=True).rstrip("\ufffd")
        assert sum(sink.tokens) == len(ids)


def test_a_missing_folder_is_refused_naming_the_path(tmp_path):
    with pytest.raises(CheckpointFolderError, match=str(tmp_path / "nope")):
        CloverBackend(path=tmp_path / "nope", device="cpu")


def test_a_corrupt_checkpoint_folder_is_refused_naming_what_is_wrong(checkpoint, tmp_path):
    (tmp_path / "tokenizer.json").write_text((checkpoint / "tokenizer.json").read_text())
    (tmp_path / "tokenizer_config.json").write_text((checkpoint / "tokenizer_config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "clover"}))
    with pytest.raises(CheckpointFolderError, match="model.safetensors"):
        CloverBackend(path=tmp_path, device="cpu")
    (tmp_path / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(CheckpointFolderError, match=str(tmp_path)):
        CloverBackend(path=tmp_path, device="cpu")


def test_a_block_size_the_checkpoint_was_not_trained_for_is_refused(checkpoint):
    with pytest.raises(ValueError, match=r"block size 32 was not trained.*\[1, 4, 8\]"):
        CloverBackend(path=checkpoint, device="cpu", block_size=32)


def test_an_unknown_commit_rule_is_refused_by_name(checkpoint):
    with pytest.raises(ValueError, match="'sometimes'"):
        CloverBackend(path=checkpoint, device="cpu", block_size=8, rule="sometimes")


def test_a_prompt_longer_than_the_context_is_refused_with_both_lengths(backend):
    long_page = "<p>" + "tides " * 400 + "</p>"
    request = PageRequest(question="Again?", previous_page=long_page)
    with pytest.raises(BackendError, match=r"prompt is \d+ tokens; the checkpoint's context is 256") as caught:
        backend.generate_page(request, Recorder())
    assert caught.value.code == "prompt_too_long"
    # Through the worker's entry the learner gets that code, not a generic failure.
    outcome = run_page(backend, request, Recorder())
    assert (outcome.status, outcome.error_code) == ("failed", "prompt_too_long")


def test_a_repair_re_samples_the_page_with_a_seed_per_attempt(backend):
    from model_worker.contract.pages import RepairNote

    def text(request):
        sink = Recorder()
        backend.generate_page(request, sink)
        return "".join(t for _, t in sink.commits)

    question = "Why are there tides?"
    greedy = text(PageRequest(question=question))
    first = PageRequest(question=question, repair=RepairNote(page=greedy, errors=("errors: boom",), attempt=1))
    second = PageRequest(question=question, repair=RepairNote(page=greedy, errors=("errors: boom",), attempt=2))
    assert text(first) == text(first)  # seeded: the same attempt samples the same page
    assert len({greedy, text(first), text(second)}) == 3
    assert backend.capabilities.revises_pages is False and backend.capabilities.streams == "drafts"


def test_a_teachers_note_reaches_the_prompt_only_of_a_checkpoint_trained_with_notes(checkpoint, tmp_path):
    """The demo checkpoint never saw a `<|note|>`: given one, it wrote broken pages for a class's topics."""
    import shutil

    request = PageRequest(question="Why are there tides?", topic_note="Draw the Moon's pull as arrows.")
    plain = PageRequest(question="Why are there tides?")
    untrained = CloverBackend(path=checkpoint, device="cpu", threads=1, block_size=8)
    assert untrained.prompt_ids(request) == untrained.prompt_ids(plain)

    trained = shutil.copytree(checkpoint, tmp_path / "with-notes")
    (trained / "training.json").write_text(json.dumps({"notes": True}), encoding="utf-8")
    backend = CloverBackend(path=trained, device="cpu", threads=1, block_size=8)
    note = special_ids(backend.tok)["note"]
    assert note in backend.prompt_ids(request) and note not in backend.prompt_ids(plain)

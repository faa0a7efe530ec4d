"""The `transformers` backend on tiny random models it loads from folders: a causal Qwen3.5 streams
tokens, a DiffusionGemma streams its denoising drafts; cancel, stats and refusals."""

from __future__ import annotations

import json

import pytest

from model_worker.backends.transformers import ModelFolderError, TransformersBackend
from model_worker.config import engine_settings, load_backend
from model_worker.contract.pages import PageRequest, RepairNote
from model_worker.worker.run import run_page


class ListSink:
    def __init__(self, stop_after_blocks: int | None = None):
        self.drafts, self.commits, self.stop_after_blocks, self.asked = [], [], stop_after_blocks, 0

    def on_draft(self, block, pieces):
        self.drafts.append((block, pieces))

    def on_commit(self, block, text, tokens):
        self.commits.append((block, text, tokens))

    def should_stop(self):
        self.asked += 1
        return self.stop_after_blocks is not None and len(self.commits) >= self.stop_after_blocks


@pytest.fixture(scope="module")
def causal(tiny_qwen_dir):
    return TransformersBackend(tiny_qwen_dir, device="cpu", max_new_tokens=40, threads=1)


@pytest.fixture(scope="module")
def diffusion(tiny_diffusion_dir):
    return TransformersBackend(tiny_diffusion_dir, device="cpu", max_new_tokens=48, threads=1)


def test_the_backend_is_chosen_by_its_short_name_with_path_device_and_token_budget(tiny_qwen_dir):
    backend = load_backend(engine_settings({"MODEL_BACKEND": "transformers", "MODEL_PATH": str(tiny_qwen_dir),
                                            "MODEL_DEVICE": "cpu", "MODEL_MAX_NEW_TOKENS": "12"}))
    assert isinstance(backend, TransformersBackend) and backend.max_new_tokens == 12
    assert backend.capabilities.streams == "tokens" and backend.capabilities.context == 4096


def test_a_causal_model_streams_its_tokens_in_blocks_and_random_weights_end_as_bad_reply(causal):
    sink = ListSink()
    outcome = run_page(causal, PageRequest(question="Why is the sky blue?", topic="atom"), sink)
    assert (outcome.status, outcome.error_code) == ("failed", "bad_reply")
    assert "no html page" in outcome.error_message
    assert not sink.drafts and len(sink.commits) >= 2
    assert [block for block, _, _ in sink.commits] == list(range(len(sink.commits)))
    assert sum(tokens for _, _, tokens in sink.commits) == outcome.stats["tokens"] == 40
    assert outcome.stats["forwards"] == 40 and outcome.stats["tokens_per_s"] > 0
    assert sink.asked >= 1  # cancel is asked once per block


def test_a_block_diffusion_model_streams_drafts_then_one_commit_per_canvas(diffusion):
    assert diffusion.capabilities.streams == "drafts"
    sink = ListSink()
    outcome = run_page(diffusion, PageRequest(question="Why is the sky blue?"), sink)
    assert outcome.error_code == "bad_reply"
    assert sink.drafts and all(len(pieces) == 16 for _, pieces in sink.drafts)
    assert [block for block, _, _ in sink.commits] == [0, 1, 2]
    assert outcome.stats["tokens"] == sum(t for _, _, t in sink.commits) == 48
    assert 1 <= outcome.stats["tokens_per_forward"] <= 16


@pytest.mark.parametrize("model", ["causal", "diffusion"])
def test_a_cancel_stops_the_model_within_one_block(model, request):
    backend = request.getfixturevalue(model)
    sink = ListSink(stop_after_blocks=1)
    outcome = run_page(backend, PageRequest(question="How do tides work?"), sink)
    assert outcome.status == "cancelled"
    assert len(sink.commits) <= 2 and outcome.stats["tokens"] < 40


def test_a_repair_samples_where_the_first_try_was_greedy(causal):
    request = PageRequest(question="What is friction?")
    first, again = ListSink(), ListSink()
    run_page(causal, request, first)
    run_page(causal, request, again)
    repaired = ListSink()
    run_page(causal, PageRequest(question="What is friction?",
                                 repair=RepairNote(page="<!doctype html><html></html>", errors=("errors: boom",))),
             repaired)
    text = lambda sink: "".join(t for _, t, _ in sink.commits)  # noqa: E731
    assert text(first) == text(again) != text(repaired)


def test_a_folder_that_is_no_model_is_refused_naming_it(tmp_path):
    with pytest.raises(ModelFolderError, match="no model folder"):
        TransformersBackend(tmp_path / "missing", device="cpu")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelFolderError, match="no config.json"):
        TransformersBackend(tmp_path, device="cpu")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3_5_text"}))
    with pytest.raises(ModelFolderError, match="could not be"):
        TransformersBackend(tmp_path, device="cpu")

"""Per-slot confidence of a block's first denoising step: it must describe what the sampler does."""

import json

import pytest

from model_worker.backends.clover import load_checkpoint
from model_worker.clover.prompt import build_prompt
from model_worker.config import DEFAULT_MODEL_PATH
from model_worker.lab import bench
from model_worker.lab.slots import corpus_sequences, slot_confidence
from model_worker.sampler import PRESETS, SamplerConfig, generate


@pytest.fixture(scope="module")
def demo():
    return load_checkpoint(DEFAULT_MODEL_PATH, "cpu")


def test_on_the_models_own_text_the_measured_run_is_what_the_sampler_commits_first(demo):
    tok, model = demo
    prompt = build_prompt(tok, question="What causes the tides?", lang="en")
    # Whole prompt blocks, so that every generated block is one the measure sees: the page's first tokens
    # (written one at a time) complete the prompt's last block.
    if len(prompt) % 32:
        fill = SamplerConfig(block_size=1, rule="threshold", threshold=0.9, max_new_tokens=-len(prompt) % 32)
        prompt += generate(model, [prompt], fill)[0].tokens
    cfg = SamplerConfig(block_size=32, rule="threshold", threshold=0.97, fallback="prefix", max_new_tokens=4 * 32)
    first_steps: dict[int, int] = {}

    def on_step(seq, block, tokens, masked):
        first_steps.setdefault(block, masked.count(False))

    [out] = generate(model, [prompt], cfg, on_step=on_step)
    assert len(out.tokens) == 4 * 32
    result = slot_confidence(model, [(len(prompt), prompt + out.tokens)], block_size=32, threshold=0.97)
    assert result["blocks"] == 4
    assert result["first_step_run"] == pytest.approx(sum(first_steps.values()) / 4)
    assert result["first_step_errors"] == 0  # its own greedy text: every committed token is right
    assert result["correct_run"] >= result["first_step_run"]


def test_threshold_zero_commits_the_whole_block_and_above_one_only_the_first_slot(demo):
    tok, model = demo
    pages = corpus_sequences(tok, DEFAULT_MODEL_PATH, 1)
    everything = slot_confidence(model, pages, block_size=8, threshold=0.0)
    assert everything["first_step_run"] == 8
    assert everything["sure_and_right"] == everything["accuracy"]
    assert sum(everything["sure_and_wrong"]) * everything["blocks"] == pytest.approx(
        everything["first_step_errors"], abs=0.01 * everything["blocks"])
    one = slot_confidence(model, pages, block_size=8, threshold=1.01)
    assert one["first_step_run"] == 1 and not any(one["sure_and_right"])


def test_bench_slots_measures_every_slot_of_the_default_diffusion_block(demo, capsys):
    # How far the checkpoint is right and sure is its figure (bench output, docs/benchmarks.md), not a test's.
    bench.main(["--slots", "2", "--device", "cpu", "--json"])
    result = json.loads(capsys.readouterr().out)
    default = PRESETS["diffusion"]
    assert result["block_size"] == default.block_size and result["threshold"] == default.threshold
    assert len(result["accuracy"]) == len(result["sure_and_right"]) == 32
    assert all(0 <= a <= 1 for a in result["accuracy"]) and result["first_step_run"] >= 1


def test_a_sequence_without_a_whole_block_after_its_prompt_is_named(demo):
    _, model = demo
    with pytest.raises(ValueError, match="no sequence holds a whole block of 32"):
        slot_confidence(model, [(10, list(range(10, 40)))], block_size=32, threshold=0.9)


def test_bench_slots_names_a_missing_checkpoint(tmp_path):
    with pytest.raises(SystemExit, match="no checkpoint folder at .*nowhere"):
        bench.main(["--slots", "2", "--path", str(tmp_path / "nowhere"), "--device", "cpu"])

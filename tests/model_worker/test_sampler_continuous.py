"""Continuous batching: sequences join a running verified batch between rounds and leave when done,
and each writes exactly what it writes alone."""

import pytest
import torch

from model_worker.sampler import SamplerConfig, generate
from model_worker.sampler.verified import VerifiedBatch
from tests.support.tiny_clover import tiny_model as _tiny_model


def tiny_model(seed: int = 0, **overrides):
    return _tiny_model(seed, random_memory_bias=False, **overrides)


def prompt(length: int, seed: int = 0) -> list[int]:
    return torch.randint(4, 64, (length,), generator=torch.Generator().manual_seed(seed)).tolist()


def alone(model, p, cfg, seed=None, max_new_tokens=None):
    over = {"seed": cfg.seed if seed is None else seed}
    if max_new_tokens is not None:
        over["max_new_tokens"] = max_new_tokens
    return generate(model, [p], SamplerConfig(**{**cfg.__dict__, **over}))[0]


@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_a_sequence_that_joins_mid_flight_writes_what_it_writes_alone_and_disturbs_no_one(temperature):
    model = tiny_model(eos_token_id=None)
    cfg = SamplerConfig(decoding="verified", block_size=8, max_new_tokens=30, temperature=temperature, seed=3)
    batch = VerifiedBatch(model, cfg)
    first = batch.admit([prompt(5), prompt(12, 1)], seeds=[10, 11])
    batch.round()
    batch.round()
    # Joins after two rounds, with a longer history and a budget of its own (a larger cache).
    late = batch.admit([prompt(20, 2)], seeds=[12], max_new_tokens=45)
    assert len(batch.running) == 3
    while batch.running:
        batch.round()
    got = batch.outputs()
    for seq, p, seed, budget in [(first[0], prompt(5), 10, 30), (first[1], prompt(12, 1), 11, 30),
                                 (late[0], prompt(20, 2), 12, 45)]:
        solo = alone(model, p, cfg, seed, budget)
        assert got[seq].tokens == solo.tokens
        assert got[seq].stats.forwards == solo.stats.forwards
    assert len(got[late[0]].tokens) == 45 and len(got[first[0]].tokens) == 30


def test_finished_sequences_leave_and_a_new_one_takes_the_batch_over():
    model = tiny_model(eos_token_id=None)
    cfg = SamplerConfig(decoding="verified", block_size=4, max_new_tokens=6)
    batch = VerifiedBatch(model, cfg)
    (short,) = batch.admit([prompt(4)])
    finished = []
    while batch.running:
        finished += batch.round()
    assert finished == [short]
    (later,) = batch.admit([prompt(9, 4)], max_new_tokens=25)  # an empty batch takes new sequences too
    while batch.running:
        batch.round()
    assert batch.outputs([later])[0].tokens == alone(model, prompt(9, 4), cfg, max_new_tokens=25).tokens


def test_a_stopped_sequence_leaves_after_its_round_and_the_others_run_on_exactly():
    model = tiny_model(eos_token_id=None)
    cfg = SamplerConfig(decoding="verified", block_size=8, max_new_tokens=30)
    batch = VerifiedBatch(model, cfg)
    asked = {"stop": False}
    (kept,) = batch.admit([prompt(7)])
    (cancelled,) = batch.admit([prompt(3, 5)], should_stop=lambda: asked["stop"])
    batch.round()
    asked["stop"] = True
    assert cancelled in batch.round()
    assert batch.running == [kept]
    while batch.running:
        batch.round()
    out = batch.outputs()
    assert out[cancelled].stopped_by == "stop" and 0 < len(out[cancelled].tokens) < 30
    assert out[kept].tokens == alone(model, prompt(7), cfg).tokens


def test_callbacks_name_each_sequence_and_count_its_own_rounds_from_zero():
    model = tiny_model(eos_token_id=None)
    blocks = []
    batch = VerifiedBatch(model, SamplerConfig(decoding="verified", block_size=8, max_new_tokens=12),
                          on_block=lambda seq, block, piece: blocks.append((seq, block, piece)))
    (a,) = batch.admit([prompt(6)])
    batch.round()
    (b,) = batch.admit([prompt(6, 1)])
    while batch.running:
        batch.round()
    out = batch.outputs()
    for seq in (a, b):
        mine = [(block, piece) for s, block, piece in blocks if s == seq]
        assert [block for block, _ in mine] == list(range(len(mine)))
        assert [t for _, piece in mine for t in piece] == out[seq].tokens


def test_a_prompt_whose_prefill_fails_joins_nothing_and_the_batch_runs_on(monkeypatch):
    model = tiny_model(eos_token_id=None)
    cfg = SamplerConfig(decoding="verified", block_size=8, max_new_tokens=24)
    batch = VerifiedBatch(model, cfg)
    (first,) = batch.admit([prompt(7)])
    batch.round()

    def out_of_memory(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(model, "prefill", out_of_memory)
    with pytest.raises(RuntimeError, match="out of memory"):
        batch.admit([prompt(9, 1)])
    monkeypatch.undo()
    assert batch.running == [first]
    while batch.running:
        batch.round()
    assert len(batch.outputs()) == 1
    assert batch.outputs()[first].tokens == alone(model, prompt(7), cfg).tokens


def test_a_finished_sequence_is_forgotten_but_a_running_one_is_not():
    model = tiny_model(eos_token_id=None)
    batch = VerifiedBatch(model, SamplerConfig(decoding="verified", block_size=8, max_new_tokens=6, temperature=0.5))
    short, long = batch.admit([prompt(5), prompt(6, 1)], max_new_tokens=None)
    with pytest.raises(ValueError, match="still running"):
        batch.forget(short)
    while batch.running:
        for seq in batch.round():
            assert len(batch.outputs([seq])[0].tokens) == 6
            batch.forget(seq)
            assert batch.done.tokens[seq] == [] and batch.draws.generators[seq] is None


def test_captured_forwards_write_the_same_pages_as_the_plain_ones_as_rows_join_and_leave():
    # Off CUDA a captured forward runs its static form eagerly: the same bookkeeping (recorded again
    # whenever the rows change), so the text must not move.
    model = tiny_model(eos_token_id=None)
    plain = SamplerConfig(decoding="verified", block_size=8, max_new_tokens=20)
    graphs = SamplerConfig(**{**plain.__dict__, "graphs": True})
    outputs = []
    for cfg in (plain, graphs):
        batch = VerifiedBatch(model, cfg)
        first = batch.admit([prompt(5), prompt(12, 1)])
        batch.round()
        late = batch.admit([prompt(9, 2)], max_new_tokens=35)
        while batch.running:
            batch.round()
        outputs.append([batch.outputs([seq])[0].tokens for seq in (*first, *late)])
    assert outputs[0] == outputs[1]
    assert [len(t) for t in outputs[1]] == [20, 20, 35]


def test_graphs_are_refused_for_a_decoding_other_than_verified():
    with pytest.raises(ValueError, match="graphs capture verified decoding's forwards, not 'diffusion'"):
        SamplerConfig(decoding="diffusion", graphs=True)

"""The decoding loop on tiny seeded CPU models: commits, caching, seeds, batching, stops and bad input."""

import pytest
import torch

from model_worker.sampler import SamplerConfig, generate
from model_worker.sampler.rules import predict, select
from tests.support.recorder import Recorder
from tests.support.tiny_clover import tiny_model as _tiny_model

MASK = 3


def tiny_model(seed: int = 0, **overrides):
    return _tiny_model(seed, random_memory_bias=False, **overrides)


def prompt(length: int, seed: int = 0) -> list[int]:
    return torch.randint(4, 64, (length,), generator=torch.Generator().manual_seed(seed)).tolist()


def reference(model, tokens: list[int], cfg: SamplerConfig) -> list[int]:
    """Greedy decoding that recomputes every step with the uncached forward over the whole sequence."""
    bs, eos = cfg.block_size, set(model.config.eos_token_ids)
    seq, end = list(tokens), len(tokens) + cfg.max_new_tokens
    while len(seq) < end:
        start = len(seq) // bs * bs
        block = torch.tensor(seq[start:] + [MASK] * (start + bs - len(seq)))
        own = len(seq) - start
        needed = torch.arange(bs) < min(bs, end - start)
        committed = torch.arange(bs) < own
        while True:
            is_eos = committed & (torch.arange(bs) >= own) & torch.isin(block, torch.tensor(sorted(eos) or [-1]))
            todo = needed & ~committed & ~((is_eos.cumsum(0) - is_eos.long()) > 0)
            if not todo.any():
                break
            with torch.no_grad():
                full = model(torch.tensor([seq[:start] + block.tolist()]), block_size=bs).logits[0]
            logits = torch.cat([torch.zeros_like(full[:1]), full[:-1]])[start : start + bs].clone()
            logits[:, MASK] = float("-inf")
            chosen, conf, entropy = predict(logits, 0.0, None, torch.zeros(bs, dtype=torch.long))
            take = select(cfg, conf[None], entropy[None], todo[None])[0]
            block = torch.where(take, chosen, block)
            committed |= take
        piece = block[own : min(bs, end - start)].tolist()
        hit = next((j for j, t in enumerate(piece) if t in eos), None)
        if hit is not None:
            return seq[len(tokens):] + piece[:hit]
        seq = seq[:start] + block[: min(bs, end - start)].tolist()
    return seq[len(tokens):]


@pytest.mark.parametrize("rule", ["threshold", "factor", "entropy", "topk"])
def test_every_step_commits_at_least_one_token_never_the_mask_and_never_changes_a_committed_one(rule):
    model, rec = tiny_model(eos_token_id=None), Recorder()
    cfg = SamplerConfig(block_size=8, rule=rule, threshold=0.3, factor=2.0, entropy_bound=1.0, k=3,
                        max_new_tokens=30)
    out = generate(model, [prompt(5), prompt(16, 1)], cfg, on_step=rec.on_step, on_block=rec.on_block)
    last = {}
    for seq, block, tokens, masked in rec.steps:
        before_masked = last.get((seq, block), (None, [True] * len(masked)))
        prev_tokens, prev_masked = before_masked
        newly = sum(p and not m for p, m in zip(prev_masked, masked, strict=True))
        assert newly >= 1
        assert all(t != MASK for t, m in zip(tokens, masked, strict=True) if not m)
        if prev_tokens is not None:
            assert all(t == pt for t, pt, pm in zip(tokens, prev_tokens, prev_masked, strict=True) if not pm)
        last[(seq, block)] = (tokens, masked)
    for i, o in enumerate(out):
        assert [t for s, _, piece in rec.blocks if s == i for t in piece] == o.tokens
        assert len(o.tokens) == 30 and o.stopped_by == "max_new_tokens"
        assert MASK not in o.tokens


def test_threshold_one_commits_one_token_per_forward_and_threshold_zero_one_forward_per_block():
    model = tiny_model(eos_token_id=None)
    rec = Recorder()
    one = generate(model, [prompt(8)], SamplerConfig(block_size=4, threshold=1.0, max_new_tokens=16),
                   on_step=rec.on_step)[0]
    assert len(rec.steps) == 16  # one token per step
    # The prefill, then at most one forward per step (a step left with only a block's first slot is
    # answered by the previous block's last position, already computed).
    assert 1 + 12 <= one.stats.forwards <= 1 + 16
    rec = Recorder()
    zero = generate(model, [prompt(8)], SamplerConfig(block_size=4, threshold=0.0, max_new_tokens=16),
                    on_step=rec.on_step)[0]
    assert len(rec.steps) == 4 and zero.stats.forwards == 1 + 4
    assert all(not any(masked) for _, _, _, masked in rec.steps)


@pytest.mark.parametrize("fallback,threshold", [("leftmost", 1.0), ("prefix", 0.2)])
def test_leftmost_and_prefix_fallbacks_fill_a_block_left_to_right(fallback, threshold):
    rec = Recorder()
    cfg = SamplerConfig(block_size=4, threshold=threshold, fallback=fallback, max_new_tokens=16)
    out = generate(tiny_model(eos_token_id=None), [prompt(8)], cfg, on_step=rec.on_step)[0]
    assert len(out.tokens) == 16
    if threshold == 1.0:
        assert len(rec.steps) == 16  # one token a step
    for _, _, _, masked in rec.steps:  # the masked positions are always the block's tail
        assert masked == sorted(masked)


@pytest.mark.parametrize("prompt_len,block_size", [(8, 4), (11, 4), (3, 8), (16, 8), (7, 1)])
def test_cached_decoding_gives_the_same_greedy_tokens_as_recomputing_everything(prompt_len, block_size):
    model = tiny_model(eos_token_id=None)
    cfg = SamplerConfig(block_size=block_size, threshold=0.2, max_new_tokens=18)
    out = generate(model, [prompt(prompt_len)], cfg)[0]
    assert out.tokens == reference(model, prompt(prompt_len), cfg)
    assert len(out.tokens) == 18


@pytest.mark.parametrize("lazy_slots", [1, 2, 8])
@pytest.mark.parametrize("threshold", [0.0, 0.05, 0.3])
def test_the_prefix_rule_projects_slots_lazily_yet_commits_what_projecting_every_slot_commits(
        monkeypatch, lazy_slots, threshold):
    import model_worker.sampler.loop as loop

    monkeypatch.setattr(loop, "LAZY_SLOTS", lazy_slots)
    model = tiny_model(eos_token_id=None)
    cfg = SamplerConfig(block_size=8, threshold=threshold, fallback="prefix", max_new_tokens=20)
    outs = generate(model, [prompt(5), prompt(12, 1)], cfg)
    for out, p in zip(outs, [prompt(5), prompt(12, 1)], strict=True):
        assert out.tokens == reference(model, p, cfg)


def test_the_same_seed_gives_the_same_sample_and_another_seed_another():
    model = tiny_model(eos_token_id=None)
    runs = [generate(model, [prompt(6)], SamplerConfig(block_size=4, temperature=1.0, seed=s, threshold=0.5,
                                                       max_new_tokens=24))[0].tokens for s in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_a_batch_gives_what_each_prompt_gives_alone():
    model = tiny_model(eos_token_id=None)
    prompts = [prompt(3), prompt(8, 1), prompt(13, 2), prompt(1, 3)]
    cfg = SamplerConfig(block_size=4, threshold=0.4, max_new_tokens=14)
    batched = generate(model, prompts, cfg)
    for p, together in zip(prompts, batched, strict=True):
        alone = generate(model, [p], cfg)[0]
        assert together.tokens == alone.tokens
        assert together.stats.forwards == alone.stats.forwards


def test_generation_stops_at_eos_and_leaves_it_out():
    model = tiny_model(eos_token_id=None)
    cfg = SamplerConfig(block_size=4, threshold=0.4, max_new_tokens=40)
    free = generate(model, [prompt(6)], cfg)[0].tokens
    model.config.eos_token_id = free[9]
    rec = Recorder()
    out = generate(model, [prompt(6)], cfg, on_block=rec.on_block)[0]
    assert out.stopped_by == "eos"
    assert free[9] not in out.tokens and len(out.tokens) < 40
    assert out.tokens == reference(model, prompt(6), cfg)
    assert [t for _, _, piece in rec.blocks for t in piece] == out.tokens


def test_a_mixed_batch_retires_finished_sequences_and_keeps_the_others_exact():
    model = tiny_model(eos_token_id=None)
    cfg = SamplerConfig(block_size=4, threshold=0.4, max_new_tokens=24)
    free = generate(model, [prompt(6)], cfg)[0].tokens
    model.config.eos_token_id = free[2]
    prompts = [prompt(6), prompt(9, 5), prompt(4, 6)]
    batched = generate(model, prompts, cfg)
    assert batched[0].stopped_by == "eos"
    for p, together in zip(prompts, batched, strict=True):
        assert together.tokens == generate(model, [p], cfg)[0].tokens


@pytest.mark.parametrize("limit", [1, 5, 12])
def test_max_new_tokens_caps_the_output_exactly(limit):
    model = tiny_model(eos_token_id=None)
    out = generate(model, [prompt(6)], SamplerConfig(block_size=4, threshold=0.5, max_new_tokens=limit))[0]
    assert len(out.tokens) == limit and out.stopped_by == "max_new_tokens"
    assert out.stats.tokens == limit


def test_should_stop_ends_every_sequence_at_a_block_boundary():
    model, rec = tiny_model(eos_token_id=None), Recorder()
    out = generate(model, [prompt(4), prompt(9)], SamplerConfig(block_size=4, max_new_tokens=40),
                   on_block=rec.on_block, should_stop=lambda: len(rec.blocks) >= 2)
    assert [o.stopped_by for o in out] == ["stop", "stop"]
    assert [len(o.tokens) for o in out] == [4, 3]  # one block each: prompt 9 leaves 3 slots in its block


def test_stats_count_generated_tokens_forwards_and_speed():
    model = tiny_model(eos_token_id=None)
    stats = generate(model, [prompt(5)], SamplerConfig(block_size=8, threshold=0.3, max_new_tokens=20))[0].stats
    assert stats.tokens == 20 and stats.forwards >= 1
    assert stats.tokens_per_forward == pytest.approx(20 / stats.forwards)
    assert stats.tokens_per_s == pytest.approx(20 / stats.seconds)
    assert 0 < stats.first_block_s <= stats.seconds
    assert set(stats.as_dict()) == {"tokens", "forwards", "seconds", "first_block_s", "tokens_per_forward",
                                    "tokens_per_s", "forwards_per_s"}


def test_a_block_size_the_checkpoint_was_not_trained_for_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"block size 16 .*\[1, 4, 8\]"):
        generate(tiny_model(), [prompt(4)], SamplerConfig(block_size=16))


def test_a_prompt_longer_than_the_context_is_refused_with_both_lengths():
    with pytest.raises(ValueError, match=r"600 tokens.*512"):
        generate(tiny_model(), [prompt(600)], SamplerConfig(block_size=4))


def test_the_context_limit_ends_generation_even_below_max_new_tokens():
    out = generate(tiny_model(eos_token_id=None), [prompt(500)], SamplerConfig(block_size=8, max_new_tokens=100))[0]
    assert len(out.tokens) == 12 and out.stopped_by == "max_new_tokens"

"""Verified decoding: block drafts kept only where block size 1 agrees, so the text is autoregressive."""

import pytest
import torch

from model_worker.backends.clover import load_checkpoint
from model_worker.clover.prompt import build_prompt
from model_worker.config import DEFAULT_MODEL_PATH
from model_worker.sampler import SamplerConfig, generate
from model_worker.sampler.verified import _Draws, _verify
from tests.support.recorder import Recorder
from tests.support.tiny_clover import tiny_model as _tiny_model


def tiny_model(seed: int = 0, **overrides):
    return _tiny_model(seed, random_memory_bias=False, **overrides)


def prompt(length: int, seed: int = 0) -> list[int]:
    return torch.randint(4, 64, (length,), generator=torch.Generator().manual_seed(seed)).tolist()


def verified(block_size: int = 8, **kw) -> SamplerConfig:
    return SamplerConfig(decoding="verified", block_size=block_size, **kw)


def autoregressive(**kw) -> SamplerConfig:
    return SamplerConfig(decoding="ar", block_size=1, **kw)


@pytest.mark.parametrize("prompt_len", [1, 5, 8, 13])
@pytest.mark.parametrize("block_size", [4, 8])
def test_greedy_verified_decoding_writes_exactly_what_block_size_one_writes(prompt_len, block_size):
    model = tiny_model(eos_token_id=None)
    p = prompt(prompt_len, seed=prompt_len)
    out = generate(model, [p], verified(block_size, max_new_tokens=40))[0]
    assert out.tokens == generate(model, [p], autoregressive(max_new_tokens=40))[0].tokens
    assert len(out.tokens) == 40 and out.stopped_by == "max_new_tokens"


def test_every_round_keeps_at_least_one_token_and_a_round_costs_two_forwards():
    model, rec = tiny_model(eos_token_id=None), Recorder()
    out = generate(model, [prompt(9)], verified(max_new_tokens=30), on_step=rec.on_step, on_block=rec.on_block)[0]
    rounds = len(rec.blocks)
    assert all(piece for _, _, piece in rec.blocks)
    assert [t for _, _, piece in rec.blocks for t in piece] == out.tokens
    assert out.stats.forwards == 1 + 2 * rounds  # the prompt's prefill, then draft and verify per round
    for (_, _, tokens, masked), (_, _, piece) in zip(rec.steps, rec.blocks, strict=True):
        kept = masked.index(True) if True in masked else len(masked)
        assert tokens[:kept] == piece and all(masked[kept:])  # the rejected drafts are shown as masked
        assert 3 not in piece  # never the mask token


def test_on_the_demo_checkpoint_drafts_are_mostly_kept_and_the_page_is_the_autoregressive_page():
    tok, model = load_checkpoint(DEFAULT_MODEL_PATH, "cpu")
    p = build_prompt(tok, question="How do magnets pick up iron nails?", lang="en")
    out = generate(model, [p], verified(32, max_new_tokens=256))[0]
    assert out.tokens == generate(model, [p], autoregressive(max_new_tokens=256))[0].tokens
    assert out.stats.tokens_per_forward > 2.5  # a broken drafter keeps one token per two forwards


def test_a_batch_gives_what_each_prompt_gives_alone_greedy_and_sampled():
    model = tiny_model(eos_token_id=None)
    prompts = [prompt(3), prompt(8, 1), prompt(13, 2), prompt(1, 3)]
    for cfg in (verified(max_new_tokens=20), verified(max_new_tokens=20, temperature=0.9, seed=5)):
        batched = generate(model, prompts, cfg)
        for i, (p, together) in enumerate(zip(prompts, batched, strict=True)):
            alone = generate(model, [p], SamplerConfig(**{**cfg.__dict__, "seed": cfg.seed + i}))[0]
            assert together.tokens == alone.tokens
            assert together.stats.forwards == alone.stats.forwards


def test_the_same_seed_gives_the_same_sample_and_another_seed_another():
    model = tiny_model(eos_token_id=None)
    runs = [generate(model, [prompt(6)], verified(temperature=1.0, seed=s, max_new_tokens=24))[0].tokens
            for s in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_speculative_sampling_keeps_the_autoregressive_distribution():
    """Whatever the drafts' distribution q, the kept text is distributed as p (the verifier's)."""
    torch.manual_seed(0)
    vocab, n = 5, 6000
    p = torch.tensor([[0.5, 0.2, 0.15, 0.1, 0.05], [0.05, 0.05, 0.1, 0.2, 0.6], [0.2] * 5])
    q = torch.tensor([[0.1, 0.1, 0.2, 0.3, 0.3], [0.3, 0.3, 0.2, 0.1, 0.1]])
    draws = _Draws(SamplerConfig(temperature=1.0, seed=11), n, "cpu")
    rows = list(range(n))
    draft_logits = q.log().expand(n, -1, -1)
    drafts = draws.sample(q.expand(n, -1, -1), rows)
    accepted, nxt = _verify(draft_logits, p.log().expand(n, -1, -1), drafts, draws, rows)
    first = torch.where(accepted >= 1, drafts[:, 0], nxt)
    freq = torch.bincount(first, minlength=vocab).float() / n
    torch.testing.assert_close(freq, p[0], atol=0.02, rtol=0)
    past = accepted >= 1  # the second token, where the first draft was kept
    second = torch.where(accepted[past] >= 2, drafts[past, 1], nxt[past])
    freq = torch.bincount(second, minlength=vocab).float() / int(past.sum())
    torch.testing.assert_close(freq, p[1], atol=0.03, rtol=0)


def test_generation_stops_at_eos_and_leaves_it_out():
    model = tiny_model(eos_token_id=None)
    free = generate(model, [prompt(6)], autoregressive(max_new_tokens=40))[0].tokens
    model.config.eos_token_id = free[9]
    out = generate(model, [prompt(6)], verified(max_new_tokens=40))[0]
    assert out.stopped_by == "eos"
    assert out.tokens == free[: free.index(free[9])]


@pytest.mark.parametrize("limit", [1, 5, 12])
def test_max_new_tokens_caps_the_output_exactly(limit):
    out = generate(tiny_model(eos_token_id=None), [prompt(6)], verified(max_new_tokens=limit))[0]
    assert len(out.tokens) == limit and out.stopped_by == "max_new_tokens" and out.stats.tokens == limit


def test_the_context_limit_ends_generation_even_below_max_new_tokens():
    out = generate(tiny_model(eos_token_id=None), [prompt(500)], verified(max_new_tokens=100))[0]
    assert len(out.tokens) == 12 and out.stopped_by == "max_new_tokens"


def test_should_stop_ends_every_sequence_after_a_round():
    model, rec = tiny_model(eos_token_id=None), Recorder()
    out = generate(model, [prompt(4), prompt(9)], verified(max_new_tokens=40), on_block=rec.on_block,
                   should_stop=lambda: len(rec.blocks) >= 2)
    assert [o.stopped_by for o in out] == ["stop", "stop"]
    assert all(1 <= len(o.tokens) < 40 for o in out)


def test_a_checkpoint_without_block_size_one_is_refused_naming_its_block_sizes():
    model = tiny_model(trained_block_sizes=[4, 8])
    with pytest.raises(ValueError, match=r"block size 1.*\[4, 8\]"):
        generate(model, [prompt(4)], verified())


def test_verified_decoding_needs_a_draft_block_wider_than_one():
    with pytest.raises(ValueError, match="at least 2 tokens"):
        generate(tiny_model(), [prompt(4)], verified(block_size=1))


def test_the_long_prefill_pieces_of_a_gpu_write_the_page_the_cpu_pieces_write(monkeypatch):
    """A GPU prefills in pieces of up to 4,096 tokens (`prefill_chunk`) to read the experts' weights fewer
    times; the pages, of one prompt and of a batch, are the ones short pieces give."""
    import model_worker.sampler.verified as verified_module

    model = tiny_model(eos_token_id=None)
    prompts = [prompt(150, seed=1), prompt(90, seed=2)]
    monkeypatch.setattr(verified_module, "PREFILL_CHUNK", 16)  # several pieces even for these prompts
    short = [o.tokens for o in generate(model, prompts, verified(8, max_new_tokens=24))]
    alone = generate(model, prompts[:1], verified(8, max_new_tokens=24))[0]
    monkeypatch.setattr(verified_module, "PREFILL_CHUNKS", {"cpu": 4096})  # as on CUDA
    assert verified_module.prefill_chunk("cpu") == 4096
    assert [o.tokens for o in generate(model, prompts, verified(8, max_new_tokens=24))] == short
    long = generate(model, prompts[:1], verified(8, max_new_tokens=24))[0]
    assert long.tokens == alone.tokens == short[0]
    assert alone.stats.forwards - long.stats.forwards == -(-149 // 16) - 1  # one prefill forward, not ten


def test_a_gpu_prefills_in_longer_pieces_than_a_cpu():
    from model_worker.sampler.verified import prefill_chunk

    assert (prefill_chunk("cpu"), prefill_chunk("cuda"), prefill_chunk(torch.device("cuda", 0))) == (512, 4096, 4096)

"""Captured decoding forwards (CUDA graphs on a GPU, the same static forwards eagerly elsewhere) write
what the plain forwards write, round after round."""

import pytest
import torch

from model_worker.clover.graphs import CapturedForward
from tests.support.tiny_clover import tiny_model


def rounds(model, device, captured: bool, lengths=(10, 6), steps=4):
    """A one-token step, then `steps` draft/verify rounds with ragged accepts; every output and the
    lengths after each round."""
    gen = torch.Generator().manual_seed(21)
    hist = torch.randint(4, 64, (2, max(lengths)), generator=gen)
    cache = model.new_cache(2, 64)
    for r, n in enumerate(lengths):
        row = cache.row(r)
        model.prefill(hist[r : r + 1, :n].to(device), row, block_size=1)
        cache.lengths[r] = row.lengths[0]
    if captured:
        step = CapturedForward(model, cache, (2, 1), block_size=1, commit=1)
        draft = CapturedForward(model, cache, (2, 8), block_size=8, keep=slice(0, 7))
        verify = CapturedForward(model, cache, (2, 8), block_size=1, trial=True)
    else:
        step = lambda ids: model.decode(ids, cache, block_size=1, commit=1)  # noqa: E731
        draft = lambda ids: model.decode(ids, cache, block_size=8, keep=slice(0, 7))  # noqa: E731
        verify = lambda ids: model.decode(ids, cache, block_size=1, trial=True)  # noqa: E731
    outs = [step(torch.randint(4, 64, (2, 1), generator=gen).to(device)).clone()]
    for k in range(steps):
        newest = torch.randint(4, 64, (2, 1), generator=gen).to(device)
        window = torch.cat([newest, torch.full((2, 7), model.config.mask_token_id, device=device)], 1)
        proposed = draft(window).argmax(-1)
        outs.append(proposed.clone())
        outs.append(verify(torch.cat([newest, proposed], 1)).clone())
        model.accept(cache, [1 + k % 3, 8 - k], block_size=1)
        outs.append(torch.tensor(cache.lengths + cache.positions.tolist()))
    return outs


def assert_same(a, b):
    for x, y in zip(a, b, strict=True):
        if x.dtype.is_floating_point:
            torch.testing.assert_close(x.cpu(), y.cpu(), atol=1e-4, rtol=1e-4)
        else:
            assert torch.equal(x.cpu(), y.cpu())


def test_captured_forwards_keep_the_history_as_the_plain_ones_do():
    model = tiny_model()
    with torch.inference_mode():
        assert_same(rounds(model, "cpu", captured=True), rounds(model, "cpu", captured=False))


def test_a_captured_forward_refuses_ids_for_another_batch_and_a_full_cache():
    model = tiny_model()
    with torch.inference_mode():
        cache = model.new_cache(2, 8)
        with pytest.raises(ValueError, match="3 rows for a cache of 2"):
            CapturedForward(model, cache, (3, 1), block_size=1)
        step = CapturedForward(model, cache, (2, 4), block_size=1, commit=4)
        step(torch.ones(2, 4, dtype=torch.long))
        step(torch.ones(2, 4, dtype=torch.long))
        with pytest.raises(ValueError, match="holds 8 positions, this forward needs 12"):
            step(torch.ones(2, 4, dtype=torch.long))
        assert cache.lengths == [8, 8]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_on_a_gpu_the_graphs_replay_what_the_plain_forwards_compute():
    model = tiny_model().cuda()
    with torch.inference_mode():
        assert_same(rounds(model, "cuda", captured=True), rounds(model, "cuda", captured=False))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_on_a_gpu_verified_decoding_on_graphs_writes_the_plain_pages_as_rows_join_and_leave():
    from model_worker.sampler import SamplerConfig
    from model_worker.sampler.verified import VerifiedBatch

    model = tiny_model(eos_token_id=None).cuda()
    prompts = [torch.randint(4, 64, (n,), generator=torch.Generator().manual_seed(n)).tolist() for n in (5, 12, 9)]
    outputs = []
    for graphs in (False, True):
        batch = VerifiedBatch(model, SamplerConfig(decoding="verified", block_size=8, max_new_tokens=20,
                                                   graphs=graphs))
        first = batch.admit(prompts[:2])
        batch.round()
        late = batch.admit(prompts[2:], max_new_tokens=35)
        while batch.running:
            batch.round()
        outputs.append([batch.outputs([seq])[0].tokens for seq in (*first, *late)])
    assert outputs[0] == outputs[1]

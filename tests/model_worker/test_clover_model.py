"""Clover's layers: exact GDN blocks, block-causal visibility, cache equals recompute, the training loss."""

import pytest
import torch
import torch.nn.functional as F

from model_worker.clover import CloverConfig, CloverForBlockDiffusion
from model_worker.clover.delta_rule import gated_delta_blocks, torch_recurrent_gated_delta_rule
from model_worker.lab.objective import block_diffusion_loss, mask_blocks
from tests.support.tiny_clover import tiny_model


@pytest.mark.parametrize("block_size,length", [(1, 24), (3, 24), (8, 24), (1, 150), (3, 150), (8, 152)])
def test_gdn_over_blocks_equals_the_token_by_token_recurrence(block_size, length):
    g = torch.Generator().manual_seed(0)
    n, t, hk, h, dk, dv = 2, length, 1, 2, 8, 6
    q, k = torch.randn(n, t, hk, dk, generator=g), torch.randn(n, t, hk, dk, generator=g)
    v = torch.randn(n, t, h, dv, generator=g)
    decay = -torch.rand(n, t, h, generator=g) * 0.3
    beta = torch.rand(n, t, h, generator=g)
    state = torch.randn(n, h, dk, dv, generator=g)

    out, memory, states = gated_delta_blocks(q, k, v, decay, beta, block_size=block_size, initial_state=state)
    ref, final = torch_recurrent_gated_delta_rule(q, k, v, decay, beta, initial_state=state,
                                                  output_final_state=True, use_qk_l2norm_in_kernel=True)
    torch.testing.assert_close(out, ref, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(states[:, -1], final, atol=1e-4, rtol=1e-4)
    # Token by token: the state at every block start, and the memory slot reading it.
    s = state
    qn = F.normalize(q, dim=-1, eps=1e-6).repeat_interleave(h // hk, dim=2) * dk**-0.5
    for i in range(t):
        if i % block_size == 0:
            torch.testing.assert_close(states[:, i // block_size], s, atol=1e-4, rtol=1e-4)
            block_state = s
        torch.testing.assert_close(memory[:, i], torch.einsum("nhk,nhkv->nhv", qn[:, i], block_state),
                                   atol=1e-4, rtol=1e-4)
        _, s = torch_recurrent_gated_delta_rule(q[:, i : i + 1], k[:, i : i + 1], v[:, i : i + 1],
                                                decay[:, i : i + 1], beta[:, i : i + 1], initial_state=s,
                                                output_final_state=True, use_qk_l2norm_in_kernel=True)


def test_changing_a_later_block_leaves_earlier_logits_unchanged_but_a_block_sees_itself_whole():
    model = tiny_model()
    ids = torch.randint(4, 64, (1, 16), generator=torch.Generator().manual_seed(1))
    later = ids.clone()
    later[0, 12:] = torch.randint(4, 64, (4,), generator=torch.Generator().manual_seed(2))
    same_block = ids.clone()
    same_block[0, 11] = (ids[0, 11] + 1 - 4) % 60 + 4
    with torch.no_grad():
        base = model(ids, block_size=4).logits
        after_later = model(later, block_size=4).logits
        after_same = model(same_block, block_size=4).logits
    torch.testing.assert_close(after_later[0, :12], base[0, :12], atol=0, rtol=0)
    assert not torch.allclose(after_same[0, 8], base[0, 8])  # bidirectional inside the block
    torch.testing.assert_close(after_same[0, :8], base[0, :8], atol=0, rtol=0)


@pytest.mark.parametrize("prompt_len", [8, 11])
def test_cached_block_logits_equal_an_uncached_recompute(prompt_len):
    model, bs = tiny_model(), 4
    ids = torch.randint(4, 64, (1, 24), generator=torch.Generator().manual_seed(3))
    hist = prompt_len // bs * bs
    with torch.no_grad():
        cache = model.new_cache(1, 64)
        head = model.prefill(ids[:, :hist], cache, block_size=bs)
        block = ids[:, hist : hist + bs]
        step = model.decode(block, cache, block_size=bs)
        # Fold the block into the cache together with the next one, as the sampler does.
        nxt = ids[:, hist + bs : hist + 2 * bs]
        fused = model.decode(torch.cat([block, nxt], 1), cache, block_size=bs, commit=1)
        after = model.decode(nxt, cache, block_size=bs)
        full = model(ids[:, : hist + 2 * bs], block_size=bs).logits
    torch.testing.assert_close(head, full[:, hist - 1], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(step, full[:, hist : hist + bs], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fused, full[:, hist : hist + 2 * bs], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(after, full[:, hist + bs : hist + 2 * bs], atol=1e-5, rtol=1e-5)
    assert cache.lengths == [hist + bs]


@pytest.mark.parametrize("block_size", [1, 4])
def test_the_inference_fast_paths_compute_what_the_training_paths_compute(block_size):
    """Without autograd, decoding takes fused forms (one-token recurrence, single-block delta rule,
    fused norms, banded conv); with autograd the original modules run. Both give the same logits."""
    model, bs = tiny_model(), block_size
    ids = torch.randint(4, 64, (1, 16), generator=torch.Generator().manual_seed(5))

    def decode_all():
        cache = model.new_cache(1, 32)
        model.prefill(ids[:, :8], cache, block_size=bs)
        steps = []
        for start in range(8, 16, bs):
            block = ids[:, start : start + bs]
            steps.append(model.decode(block, cache, block_size=bs))  # a denoising step: commits nothing
            steps.append(model.decode(block, cache, block_size=bs, commit=1))
        return torch.cat(steps, 1)

    with torch.no_grad():
        fast = decode_all()
    with torch.enable_grad():
        slow = decode_all().detach()
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=1e-5)


def drawn_masks(**rates) -> torch.Tensor:
    """`mask_blocks` over four rows of four 8-token blocks, all maskable, with fixed seeds: (4, 4, 8)."""
    ids = torch.randint(4, 64, (4, 32), generator=torch.Generator().manual_seed(8))
    return mask_blocks(tiny_model(), ids, block_size=8, maskable=torch.ones_like(ids, dtype=torch.bool),
                       generator=torch.Generator().manual_seed(9), **rates).view(4, 4, 8)


def test_suffix_masking_masks_each_block_from_a_cut_to_its_end():
    """The state the prefix fallback decodes from: committed text on the left, masks after it."""
    masked = drawn_masks(suffix_rate=1.0)
    assert masked.any(-1).all()
    assert torch.equal(masked, masked.long().cumsum(-1).bool())  # once masked, masked to the block's end
    cuts = set((8 - masked.sum(-1)).flatten().tolist())
    assert len(cuts) > 3  # cuts vary from block to block
    plain = drawn_masks()
    assert not torch.equal(plain, plain.long().cumsum(-1).bool())


def test_draft_masking_masks_every_slot_of_a_block_but_its_first():
    """The window verified decoding drafts: its newest token, then masks."""
    window = torch.tensor([False] + [True] * 7)
    assert torch.equal(drawn_masks(draft_rate=1.0), window.expand(4, 4, 8))
    drafted = (drawn_masks(draft_rate=0.5).view(16, 8) == window).all(-1).sum()
    assert 3 <= drafted <= 13  # about half the blocks


def replay_last_block_masks(model, ids, maskable, bs, *, seed):
    """The masks the loss drew with `seed` when only positions 12.. (the last block) are maskable."""
    n, length = ids.shape
    g = torch.Generator().manual_seed(seed)  # replay the draws the loss made
    rate = 1.0 - torch.rand(n, length // bs, generator=g)
    u = torch.rand(n, length, generator=g)
    masked = maskable & (u < rate.repeat_interleave(bs, 1))
    for r in range(n):
        if not masked[r].any():
            masked[r, 12 + int(u[r, 12:].argmin())] = True
    return masked, torch.where(masked, model.config.mask_token_id, ids)


def test_the_training_loss_scores_a_noisy_block_exactly_as_inference_sees_it():
    model, bs, n, length = tiny_model(), 4, 2, 16
    ids = torch.randint(4, 64, (n, length), generator=torch.Generator().manual_seed(4))
    maskable = torch.zeros(n, length, dtype=torch.bool)
    maskable[:, 12:] = True  # only the last block can be noised: history stays clean
    loss = block_diffusion_loss(model, ids, block_size=bs, maskable=maskable,
                                generator=torch.Generator().manual_seed(5))

    masked, noisy = replay_last_block_masks(model, ids, maskable, bs, seed=5)
    with torch.no_grad():
        logits = model(noisy, block_size=bs).logits  # f(clean history, noisy block)
        clean = model(ids, block_size=bs).logits
    source = torch.cat([clean[:, 11:12], logits[:, 12:15]], 1)  # position p is read from p - 1
    target = masked[:, 12:]
    expected = F.cross_entropy(source[target], ids[:, 12:][target])
    torch.testing.assert_close(loss.detach(), expected, atol=1e-5, rtol=1e-5)


def test_with_causal_history_the_loss_scores_a_noisy_block_as_verified_decoding_drafts_it():
    """The drafter of verified decoding reads history cached at block size 1; the objective with
    `causal_history` must score exactly those logits (and differ from the block-causal history)."""
    model, bs, n, length = tiny_model(), 4, 2, 16
    ids = torch.randint(4, 64, (n, length), generator=torch.Generator().manual_seed(4))
    maskable = torch.zeros(n, length, dtype=torch.bool)
    maskable[:, 12:] = True
    loss = block_diffusion_loss(model, ids, block_size=bs, maskable=maskable,
                                generator=torch.Generator().manual_seed(5), causal_history=True)
    plain = block_diffusion_loss(model, ids, block_size=bs, maskable=maskable,
                                 generator=torch.Generator().manual_seed(5))

    masked, noisy = replay_last_block_masks(model, ids, maskable, bs, seed=5)
    with torch.inference_mode():
        cache = model.new_cache(n, length)
        for r in range(n):
            row = cache.row(r)
            model.prefill(ids[r : r + 1, :12], row, block_size=1)
            cache.lengths[r] = row.lengths[0]
        block = model.decode(noisy[:, 12:], cache, block_size=bs)  # drafted against the causal cache
        head = model(ids, block_size=1).logits[:, 11:12]
    source = torch.cat([head, block[:, :3]], 1)
    target = masked[:, 12:]
    expected = F.cross_entropy(source[target], ids[:, 12:][target])
    torch.testing.assert_close(loss.detach(), expected, atol=1e-5, rtol=1e-5)
    assert abs(float(loss.detach()) - float(plain.detach())) > 1e-4


def test_the_loss_masks_at_least_one_position_per_block_never_padding_and_trains_the_new_paths():
    model = tiny_model()
    model.train()
    ids = torch.randint(4, 64, (3, 20), generator=torch.Generator().manual_seed(6))
    ids[2, 10:] = model.config.pad_token_id
    maskable = torch.ones_like(ids, dtype=torch.bool)
    masked = mask_blocks(model, ids, block_size=8, maskable=maskable, generator=torch.Generator().manual_seed(7))
    assert not masked[2, 10:].any() and not masked[:, 0].any()
    per_block = torch.nn.functional.pad(masked, (0, 4)).view(3, 3, 8).any(-1)
    assert per_block[:2].all() and per_block[2, :2].all() and not per_block[2, 2]
    a = block_diffusion_loss(model, ids, block_size=8, maskable=maskable, generator=torch.Generator().manual_seed(7))
    b = block_diffusion_loss(model, ids, block_size=8, maskable=maskable, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a, b)
    a.backward()
    gdn = model.model.layers[0].linear_attn
    for p in (gdn.joint_gate, gdn.conv_right, gdn.block_calibration, gdn.memory_bias):
        assert p.grad is not None and p.grad.abs().sum() > 0

    fresh = CloverForBlockDiffusion(CloverConfig.preset("tiny"))  # gates at zero still learn
    block_diffusion_loss(fresh, ids, block_size=8, maskable=maskable).backward()
    gdn = fresh.model.layers[0].linear_attn
    assert gdn.joint_gate.grad.abs().sum() > 0 and gdn.conv_right.grad.abs().sum() > 0


def test_an_all_padding_batch_gives_a_zero_loss_that_still_backpropagates():
    model = tiny_model()
    ids = torch.zeros(2, 8, dtype=torch.long)
    loss = block_diffusion_loss(model, ids, block_size=4, maskable=torch.ones_like(ids, dtype=torch.bool))
    loss.backward()
    assert loss.item() == 0.0


def test_training_still_works_after_decoding_in_inference_mode():
    from model_worker.sampler import SamplerConfig, generate

    model = tiny_model()
    generate(model, [[5, 6, 7, 8, 9]], SamplerConfig(block_size=4, max_new_tokens=8))
    ids = torch.randint(4, 64, (2, 16), generator=torch.Generator().manual_seed(8))
    loss = block_diffusion_loss(model, ids, block_size=4, maskable=torch.ones_like(ids, dtype=torch.bool))
    loss.backward()
    assert model.lm_head.weight.grad is not None


@pytest.mark.parametrize("block_size,keep", [(1, [5, 17]), (1, [0, 24]), (1, [7, 7]), (1, [0, 0]), (4, [4, 16]), (4, [8, 8])])
def test_a_trial_forward_then_accept_leaves_the_cache_a_committing_forward_leaves(block_size, keep):
    """Verified decoding decides after the forward how much of it becomes history."""
    model, width = tiny_model(), 24
    hist = torch.randint(4, 64, (2, 12), generator=torch.Generator().manual_seed(1))
    x = torch.randint(4, 64, (2, width), generator=torch.Generator().manual_seed(2))
    probe = torch.randint(4, 64, (2, 8), generator=torch.Generator().manual_seed(3))
    with torch.inference_mode():
        trial, direct = model.new_cache(2, 64), model.new_cache(2, 64)
        for cache in (trial, direct):
            for r in range(2):
                row = cache.row(r)
                model.prefill(hist[r : r + 1], row, block_size=4)
                cache.lengths[r] = row.lengths[0]
        model.decode(x, trial, block_size=block_size, trial=True)
        assert trial.lengths == [12, 12]  # nothing committed yet
        model.accept(trial, [k // block_size for k in keep], block_size=block_size)
        for r, k in enumerate(keep):
            row = direct.row(r)
            if k:
                model.decode(x[r : r + 1, :k], row, block_size=block_size, commit=k // block_size)
            direct.lengths[r] = row.lengths[0]
        assert trial.lengths == direct.lengths == [12 + k for k in keep]
        torch.testing.assert_close(model.decode(probe, trial, block_size=4), model.decode(probe, direct, block_size=4),
                                   atol=1e-5, rtol=1e-5)


def test_accept_without_a_trial_forward_or_beyond_it_is_refused():
    model = tiny_model()
    with torch.inference_mode():
        cache = model.new_cache(1, 32)
        with pytest.raises(ValueError, match="trial forward"):
            model.accept(cache, [1], block_size=1)
        model.decode(torch.randint(4, 64, (1, 8)), cache, block_size=1, trial=True)
        with pytest.raises(ValueError, match=r"outside 0\.\.8"):
            model.accept(cache, [9], block_size=1)
        with pytest.raises(ValueError, match="one count per row"):
            model.accept(cache, [1, 2], block_size=1)


@pytest.mark.parametrize("block_size,stride,length", [(1, 8, 24), (1, 32, 150), (4, 8, 40)])
def test_a_causal_pass_keeps_the_states_a_wider_block_starts_from(block_size, stride, length):
    from model_worker.clover.delta_rule import delta_blocks

    g = torch.Generator().manual_seed(0)
    n, t, h, dk, dv = 2, length, 2, 8, 6
    q, k = torch.randn(n, t, h, dk, generator=g), torch.randn(n, t, h, dk, generator=g)
    v = torch.randn(n, t, h, dv, generator=g)
    decay, beta = -torch.rand(n, t, h, generator=g) * 0.3, torch.rand(n, t, h, generator=g)
    every = delta_blocks(q, k, v, decay, beta, block_size=block_size).states
    strided = delta_blocks(q, k, v, decay, beta, block_size=block_size, state_stride=stride).states
    starts = list(range(0, t, stride)) + [t]
    torch.testing.assert_close(strided, every[:, [s // block_size for s in starts[:-1]] + [-1]], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("sizes", [[0, 5, 150], [70, 70, 3], [9, 140]])
def test_batched_prefill_leaves_each_row_the_history_its_own_prefill_leaves(sizes):
    """Prompts of different lengths prefilled in one batch (the shared length, then trial chunks each
    row accepts its own part of) give every row the cache, and the next logits, of a prefill alone."""
    model = tiny_model()
    gen = torch.Generator().manual_seed(11)
    prompts = [torch.randint(4, 64, (n,), generator=gen) for n in sizes]
    with torch.inference_mode():
        batch = model.new_cache(len(sizes), max(sizes) + 8)
        forwards = model.prefill_rows(prompts, batch, chunk=32)  # a small chunk: the shared part takes several
        assert batch.lengths == sizes and batch.positions.tolist() == sizes
        assert forwards == -(-min(sizes) // 32) + -(-(max(sizes) - min(sizes)) // 64)
        nxt = torch.randint(4, 64, (len(sizes), 1), generator=gen)
        got = model.decode(nxt, batch, block_size=1)
        for r, p in enumerate(prompts):
            alone = model.new_cache(1, max(sizes) + 8)
            if len(p):
                model.prefill(p[None], alone, block_size=1, chunk=32)
            for mine, theirs in zip(batch.layers, alone.layers, strict=True):
                for name in ("recurrent", "conv"):
                    if getattr(mine, name) is not None:
                        torch.testing.assert_close(getattr(mine, name)[r], getattr(theirs, name)[0],
                                                   atol=1e-5, rtol=1e-4)
                if mine.key is not None:
                    torch.testing.assert_close(mine.key[r, :, : len(p)], theirs.key[0, :, : len(p)],
                                               atol=1e-4, rtol=1e-4)
            want = model.decode(nxt[r : r + 1], alone, block_size=1)
            torch.testing.assert_close(got[r], want[0], atol=1e-4, rtol=1e-4)


def test_batched_prefill_refuses_a_cache_that_is_not_empty_or_has_other_rows():
    model = tiny_model()
    prompts = [torch.arange(4, 10), torch.arange(4, 7)]
    with torch.inference_mode():
        with pytest.raises(ValueError, match="empty cache of 2 rows"):
            model.prefill_rows(prompts, model.new_cache(3, 16))
        used = model.new_cache(2, 16)
        model.prefill(torch.arange(4, 8)[None].expand(2, -1), used, block_size=1)
        with pytest.raises(ValueError, match="empty cache"):
            model.prefill_rows(prompts, used)


@pytest.mark.filterwarnings("ignore::UserWarning")  # on CPU SDPA materialises the bias, and says so
def test_a_causal_pass_with_the_lower_right_bias_equals_the_boolean_mask():
    """The CUDA path hands a causal pass over rows of one length to SDPA as its lower-right causal bias
    (no mask in memory); it must see what the boolean mask lets it see: the history and the pass so far."""
    model = tiny_model()
    gen = torch.Generator().manual_seed(12)
    history, new = torch.randint(4, 64, (2, 20), generator=gen), torch.randint(4, 64, (2, 9), generator=gen)
    out = {}
    with torch.inference_mode():
        for bias in (False, True):
            cache = model.new_cache(2, 40)
            model.prefill(history, cache, block_size=1, chunk=8)  # prefill chunks are causal passes too
            out[bias] = (model.decode(new, cache, block_size=1, trial=True, lower_right=bias),
                         [s.key[:, :, :29].clone() for s in cache.layers if s.key is not None])
    torch.testing.assert_close(out[True][0], out[False][0], atol=1e-5, rtol=1e-5)
    for a, b in zip(out[True][1], out[False][1], strict=True):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("lengths", [[12, 12], [12, 5]])
def test_the_static_forms_of_the_decoding_forwards_equal_the_plain_ones(lengths):
    """`static=True` (shapes fixed by the cache's capacity, the form a CUDA graph captures) writes the
    same history and predicts the same tokens as the plain forwards: a one-token step, a draft, a
    verify forward with its accept."""
    model = tiny_model()
    gen = torch.Generator().manual_seed(13)
    hist = torch.randint(4, 64, (2, max(lengths)), generator=gen)
    one, drafts = torch.randint(4, 64, (2, 1), generator=gen), torch.randint(4, 64, (2, 8), generator=gen)
    window = torch.full((2, 8), model.config.mask_token_id)
    window[:, 0] = one[:, 0]
    runs = {}
    with torch.inference_mode():
        for static in (False, True):
            cache = model.new_cache(2, 48)
            for r, n in enumerate(lengths):
                row = cache.row(r)
                model.prefill(hist[r : r + 1, :n], row, block_size=1)
                cache.lengths[r] = row.lengths[0]
            step = model.decode(one, cache, block_size=1, commit=1, static=static)
            draft = model.decode(window, cache, block_size=8, static=static)
            verify = model.decode(drafts, cache, block_size=1, trial=True, static=static)
            model.accept(cache, [3, 6], block_size=1)
            after = model.decode(one, cache, block_size=1, static=static)
            runs[static] = (step, draft, verify, after, list(cache.lengths), cache.positions.tolist())
    for plain, static in zip(runs[False][:4], runs[True][:4], strict=True):
        torch.testing.assert_close(static, plain, atol=1e-5, rtol=1e-5)
    expected = [lengths[0] + 4, lengths[1] + 7]  # one committed token, then 3 and 6 accepted
    assert runs[True][4:] == runs[False][4:] == (expected, expected)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the flash kernel's lower-right causal path needs a GPU")
def test_on_a_gpu_the_lower_right_bias_runs_the_kernel_and_equals_the_boolean_mask():
    model = tiny_model().cuda().to(torch.bfloat16)
    gen = torch.Generator().manual_seed(14)
    history, new = torch.randint(4, 64, (2, 40), generator=gen).cuda(), torch.randint(4, 64, (2, 16), generator=gen).cuda()
    out = {}
    with torch.inference_mode():
        for bias in (False, True):
            cache = model.new_cache(2, 64)
            model.prefill(history, cache, block_size=1, chunk=16)
            out[bias] = model.decode(new, cache, block_size=1, trial=True, lower_right=bias)
    torch.testing.assert_close(out[True], out[False], atol=2e-2, rtol=2e-2)

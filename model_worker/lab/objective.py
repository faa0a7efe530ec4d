"""The block-diffusion objective Clover models train on (BD3-LM style); the serving path never runs it."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from model_worker.clover.modeling import CloverForBlockDiffusion, block_causal


def mask_blocks(
    model: CloverForBlockDiffusion, input_ids: torch.LongTensor, *, block_size: int, maskable: torch.Tensor,
    generator: torch.Generator | None = None, suffix_rate: float = 0.0, draft_rate: float = 0.0,
) -> torch.Tensor:
    """Bool (N, L): per block a rate t ~ U(0, 1] of its maskable positions, at least one where it has any.

    With probability `suffix_rate` a block is instead masked from a random cut to its end: the
    state the sampler's prefix fallback decodes from (committed text on the left, masks after it).
    With probability `draft_rate` a block is masked everywhere but its first position: the window
    verified decoding drafts (the newest token, then masks).
    Padding and the first position (nothing precedes it to predict it from) are never masked.
    """
    n, length = input_ids.shape
    maskable = maskable.bool() & (input_ids != model.config.pad_token_id)
    maskable[:, 0] = False
    pad = -length % block_size
    maskable = F.pad(maskable, (0, pad), value=False)
    nb = (length + pad) // block_size
    where = generator.device if generator is not None else input_ids.device
    rate = 1.0 - torch.rand(n, nb, generator=generator, device=where).to(input_ids.device)
    u = torch.rand(n, length + pad, generator=generator, device=where).to(input_ids.device)
    masked = maskable & (u < rate.repeat_interleave(block_size, 1))
    if suffix_rate > 0:
        cut = torch.randint(0, block_size, (n, nb), generator=generator, device=where).to(input_ids.device)
        pick = torch.rand(n, nb, generator=generator, device=where).to(input_ids.device) < suffix_rate
        suffix = torch.arange(block_size, device=input_ids.device) >= cut[..., None]  # (N, nb, B)
        masked = torch.where(pick.repeat_interleave(block_size, 1), maskable & suffix.view(n, -1), masked)
    if draft_rate > 0:
        pick = torch.rand(n, nb, generator=generator, device=where).to(input_ids.device) < draft_rate
        window = (torch.arange(length + pad, device=input_ids.device) % block_size > 0)[None]
        masked = torch.where(pick.repeat_interleave(block_size, 1), maskable & window, masked)
    need = maskable.view(n, nb, block_size).any(-1) & ~masked.view(n, nb, block_size).any(-1)
    first = torch.where(maskable, u, 2.0).view(n, nb, block_size).argmin(-1)
    masked = masked | (F.one_hot(first, block_size).bool() & need[..., None]).view(n, -1)
    return masked[:, :length]


def block_diffusion_loss(
    model: CloverForBlockDiffusion, input_ids: torch.LongTensor, *, block_size: int, maskable: torch.Tensor,
    generator: torch.Generator | None = None, suffix_rate: float = 0.0, causal_history: bool = False,
    draft_rate: float = 0.0,
) -> torch.Tensor:
    """Mean cross-entropy over masked positions of the block-diffusion objective (BD3-LM style).

    Each block draws a rate t ~ U(0, 1] and masks that fraction of its maskable positions (at least
    one). The clean stream runs once; each noisy block attends to clean history and itself. With
    `causal_history` the clean stream runs at block size 1, as the cache of verified decoding holds
    it, so the noisy blocks learn to draft from that history; `draft_rate` (see `mask_blocks`) then
    gives them the window it drafts.
    """
    cfg = model.config
    ids, masked = input_ids, mask_blocks(model, input_ids, block_size=block_size, maskable=maskable,
                                         generator=generator, suffix_rate=suffix_rate, draft_rate=draft_rate)
    length = ids.shape[1]
    pad = -length % block_size
    if pad:
        ids = F.pad(ids, (0, pad), value=cfg.pad_token_id)
        masked = F.pad(masked, (0, pad), value=False)
        length += pad
    dev = ids.device

    if block_size == 1:  # every prediction comes from the clean stream: plain next-token loss
        hc, hn = model.model(ids, 1), None
    else:
        hc = model.model.embed_tokens(ids)
        hn = model.model.embed_tokens(torch.where(masked, cfg.mask_token_id, ids))
        cos, sin = model.model.rope(torch.arange(length, device=dev)[None], hc.dtype)
        clean_mask, noisy_mask = block_causal(length, block_size, dev, torch.is_inference_mode_enabled())
        if causal_history:
            clean_mask = block_causal(length, 1, dev, torch.is_inference_mode_enabled())[0]
        tables = (cos, sin, clean_mask, noisy_mask)
        for layer in model.model.layers:
            hc, hn = layer.forward_pair(hc, hn, block_size, tables, clean_block_size=1 if causal_history else None)
        hc, hn = model.model.norm(hc), model.model.norm(hn)
    # Position i is predicted from position i - 1: the clean previous block at a block start, the
    # noisy current block elsewhere.
    starts = (torch.arange(1, length, device=dev) % block_size == 0)[None, :, None]
    source = hc[:, :-1] if hn is None else torch.where(starts, hc[:, :-1], hn[:, :-1])
    target = masked[:, 1:]
    if not bool(target.any()):
        return model.lm_head(source[:, :1]).sum() * 0.0
    logits = model.lm_head(source[target]).float()
    return F.cross_entropy(logits, ids[:, 1:][target])

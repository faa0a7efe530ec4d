"""Verified block drafts: block diffusion proposes a block, block size 1 decides what stays.

The same checkpoint plays both parts (self-speculative decoding). Each round takes two forwards:
1. draft: one block-diffusion forward over [newest token, B - 1 masks] after the history proposes
   every masked slot at once;
2. verify: one forward at block size 1 (causal, the autoregressive model) over [newest token, drafts]
   gives the autoregressive prediction after every draft prefix. The round keeps the longest run of
   drafts that autoregressive decoding would also have produced, then the autoregressive token after
   it (so every round adds at least one token), and folds exactly those tokens into the cache.

Greedy, the text is token for token what block size 1 decodes; with a temperature each draft is kept
with probability min(1, p/q) and a rejected one is redrawn from the leftover max(0, p - q), so the text
is distributed as the autoregressive model's samples (speculative sampling). The history is encoded
at block size 1 throughout: one cache, no block alignment, a round may start anywhere.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .config import SamplerConfig
from .rows import Rows
from .stats import GenerationOutput

PREFILL_CHUNK = 512


class _Draws:
    """Per-sequence random draws of a fixed shape each round, so a sequence's sample does not depend on
    the batch it runs in (greedy decoding draws nothing)."""

    def __init__(self, cfg: SamplerConfig, n: int, device):
        self.temperature = cfg.temperature
        self.generators = None if cfg.temperature == 0 else [
            torch.Generator(device=device).manual_seed(cfg.seed + i) for i in range(n)]

    def uniform(self, rows: list[int], shape: tuple[int, ...], device) -> torch.Tensor:
        return torch.stack([torch.rand(shape, generator=self.generators[i], device=self.generators[i].device)
                            for i in rows]).to(device)

    def sample(self, probs: torch.Tensor, rows: list[int]) -> torch.Tensor:
        """One token per row of probs (M, ..., V): Gumbel-max over log-probabilities."""
        u = self.uniform(rows, tuple(probs.shape[1:]), probs.device).clamp_min(1e-20)
        return (probs.clamp_min(1e-30).log() - torch.log(-torch.log(u))).argmax(-1)


def _verify(draft_logits, verify_logits, drafts, draws: _Draws, rows: list[int]):
    """Accepted draft count (M,) and the token after the accepted run (M,).

    draft_logits (M, D, V) proposed drafts (M, D); verify_logits (M, D + 1, V): the autoregressive
    prediction for every draft slot and for the slot after the last draft.
    """
    m, d = drafts.shape
    if draws.temperature == 0:
        ar = verify_logits.argmax(-1)  # (M, D + 1)
        agree = ar[:, :d] == drafts
        accepted = agree.long().cumprod(-1).sum(-1)
        return accepted, ar.gather(1, accepted[:, None]).squeeze(1)
    p = (verify_logits / draws.temperature).softmax(-1)
    q = (draft_logits / draws.temperature).softmax(-1)
    p_d = p[:, :d].gather(-1, drafts[..., None]).squeeze(-1)
    q_d = q.gather(-1, drafts[..., None]).squeeze(-1)
    keep = draws.uniform(rows, (d,), p.device) * q_d < p_d  # u < p/q, without dividing by a zero q
    accepted = keep.long().cumprod(-1).sum(-1)
    # After a rejection: the leftover max(0, p - q) at that slot; after D acceptances: p past the drafts.
    q_pad = torch.cat([q, q.new_zeros(m, 1, q.shape[-1])], 1)
    at = accepted[:, None, None].expand(-1, 1, p.shape[-1])
    p_at, q_at = p.gather(1, at).squeeze(1), q_pad.gather(1, at).squeeze(1)
    left = (p_at - q_at).clamp_min(0)
    left = torch.where(left.sum(-1, keepdim=True) > 0, left, p_at)  # p == q: nothing left, draw from p
    return accepted, draws.sample(left, rows)


def draft_and_verify(model, cache, newest: torch.Tensor, bs: int, draws: _Draws, rows: list[int]):
    """A round's two forwards, without reading the device: drafts (M, B - 1), accepted draft counts (M,)
    and the token after each accepted run (M,). `newest` (M,) opens each row's window."""
    mask_id = model.config.mask_token_id
    window = torch.full((newest.shape[0], bs), mask_id, dtype=torch.long, device=newest.device)
    window[:, 0] = newest
    draft_logits = model.decode(window, cache, block_size=bs, keep=slice(0, bs - 1))  # (M, B - 1, V)
    draft_logits[..., mask_id] = float("-inf")
    drafts = (draft_logits.argmax(-1) if draws.temperature == 0
              else draws.sample((draft_logits / draws.temperature).softmax(-1), rows))
    verify_logits = model.decode(torch.cat([window[:, :1], drafts], 1), cache, block_size=1, trial=True)
    verify_logits[..., mask_id] = float("-inf")
    accepted, nxt = _verify(draft_logits, verify_logits, drafts, draws, rows)
    return drafts, accepted, nxt


@torch.inference_mode()
def generate_verified(
    model,
    prompts: list[list[int]],
    cfg: SamplerConfig,
    on_step: Callable[[int, int, list[int], list[bool]], None] | None = None,
    on_block: Callable[[int, int, list[int]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[GenerationOutput]:
    """Verified decoding (see `decodings.generate`); a round plays the part of a block for the callbacks.

    on_step(seq, round, tokens, masked) once per round: the kept tokens, then the rejected drafts as
    masked; on_block(seq, round, tokens) with the round's kept tokens, EOS trimmed. The caller has
    checked that block sizes 1 and `cfg.block_size` were trained.
    """
    config, bs = model.config, cfg.block_size
    device = next(model.parameters()).device
    n = len(prompts)
    done = Rows(n, config.eos_token_ids, on_block)
    ends = [min(len(p) + cfg.max_new_tokens, config.max_position_embeddings) for p in prompts]  # exclusive
    cache = model.new_cache(n, max(ends) + bs)
    draws = _Draws(cfg, n, device)

    # The cache holds every committed token but the newest, which opens the next round's draft.
    forwards = done.forwards
    for i, prompt in enumerate(prompts):
        if len(prompt) > 1:
            row = cache.row(i)
            model.prefill(torch.tensor(prompt[:-1], device=device)[None], row, block_size=1, chunk=PREFILL_CHUNK)
            cache.lengths[i] = row.lengths[0]
            forwards[i] += -(-(len(prompt) - 1) // PREFILL_CHUNK)
    # The token that opens each row's next draft stays on the device: the round's input needs no copy.
    newest = torch.tensor([p[-1] for p in prompts], device=device)
    length = [len(p) for p in prompts]  # committed tokens, prompt included
    round_no = 0

    while done.rows:
        if done.stop_requested(should_stop):
            break
        rows = done.rows
        drafts, accepted, nxt = draft_and_verify(model, cache, newest, bs, draws, rows)

        # The round's one host synchronisation: drafts, accepted count and next token of every row at once.
        read = torch.cat([drafts, accepted[:, None], nxt[:, None]], 1).tolist()
        now = done.elapsed()
        counts, keep_rows = [], []
        for r, i in enumerate(rows):
            forwards[i] += 2
            *drafted, a, after = read[r]
            new = (drafted[:a] + [after])[: ends[i] - length[i]]
            if on_step is not None:
                shown = new + drafted[a + 1:]
                on_step(i, round_no, shown, [False] * len(new) + [True] * (len(shown) - len(new)))
            length[i] += len(new)
            counts.append(len(new))  # the round's input [newest, new[:-1]] becomes history
            if done.finish_piece(i, round_no, new, at_limit=length[i] >= ends[i], now=now):
                keep_rows.append(r)  # a row that runs on kept its whole `new`: its newest token is `nxt`
        model.accept(cache, counts, block_size=1)
        newest = nxt
        if len(keep_rows) < len(rows):
            if not done.retire(keep_rows):
                break
            cache = cache.select(keep_rows)
            newest = newest.index_select(0, torch.tensor(keep_rows, device=device))
        round_no += 1

    return done.outputs()

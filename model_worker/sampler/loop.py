"""The diffusion loop: blocks left to right, each denoised from all-mask, committed with exact caching.

All sequences of a batch advance block by block together: a row whose block is finished waits (its
logits are ignored) until every row has finished the block, then one forward over [finished block,
next block] commits the former into the caches and takes the first denoising step of the latter.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .config import SamplerConfig
from .rows import Rows
from .rules import predict, select
from .stats import GenerationOutput

StepCallback = Callable[[int, int, list[int], list[bool]], None]
BlockCallback = Callable[[int, int, list[int]], None]


def check_prompts(model, prompts: list[list[int]]) -> None:
    """Reject prompts the checkpoint cannot continue, naming the offending one."""
    context = model.config.max_position_embeddings
    for i, prompt in enumerate(prompts):
        if not prompt:
            raise ValueError(f"prompt {i} is empty; it needs at least one token")
        if len(prompt) >= context:
            raise ValueError(f"prompt {i} has {len(prompt)} tokens, longer than the context of {context} tokens")


# Under the prefix rule a step commits a run that starts at each row's next masked slot, so slots are
# projected onto the vocabulary in two rounds: the first LAZY_SLOTS masked slots of every row, then the
# rest only for rows whose first LAZY_SLOTS all cleared the threshold. Same tokens, fewer projections.
LAZY_SLOTS = 8


class BlockScores:
    """One forward's predictions for a block's masked slots (r_idx, j_idx), projected on demand.

    Slot j is read from the position before it: slot 0 from the previous block's last position (`head`,
    one row of logits per sequence), the others from the block's own positions. With `prev` (the
    finished previous block) the forward also folds it into the caches and refreshes `head`. `called`
    says whether the model ran (not when `head` answered every slot).
    """

    def __init__(self, model, cache, cur, prev, head, r_idx, j_idx):
        n, bs = cur.shape
        self.model, self.r_idx = model, r_idx
        self.inside = j_idx > 0
        self.hidden, self.called, self.head = None, True, head
        if prev is not None:
            # [prev, cur]: slot j of cur is read from input j + bs - 1 (for j = 0, prev's last position).
            ids, width = (torch.cat([prev, cur], 1), 2 * bs) if bs > 1 else (prev, 1)
            heads = torch.arange(n, device=cur.device) * width + bs - 1
            src = r_idx[self.inside] * width + j_idx[self.inside] + bs - 1
            h = model.decode(ids, cache, block_size=bs, commit=1, keep=torch.cat([heads, src]), project=False)
            self.head, self.hidden = model.logits(h[:n]), h[n:]
        elif bool(self.inside.any()):
            src = r_idx[self.inside] * bs + j_idx[self.inside] - 1
            self.hidden = model.decode(cur, cache, block_size=bs, keep=src, project=False)
        else:
            self.called = False
        self.slot = self.inside.long().cumsum(0) - 1  # each inside slot's row in `hidden`

    def logits(self, sel: torch.Tensor | None = None) -> torch.Tensor:
        """fp32 logits (K', V) of the selected slots (every slot without `sel`); never the mask token."""
        inside, rows, slot = ((self.inside, self.r_idx, self.slot) if sel is None
                              else (self.inside[sel], self.r_idx[sel], self.slot[sel]))
        if self.hidden is not None and bool(inside.all()):
            out = self.model.logits(self.hidden if sel is None else self.hidden.index_select(0, slot))
        else:
            out = self.head.index_select(0, rows)
            if bool(inside.any()):
                out[inside] = self.model.logits(self.hidden.index_select(0, slot[inside]))
        out[:, self.model.config.mask_token_id] = float("-inf")
        return out


@torch.inference_mode()
def generate_blocks(
    model,
    prompts: list[list[int]],
    cfg: SamplerConfig,
    on_step: StepCallback | None = None,
    on_block: BlockCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[GenerationOutput]:
    """Diffusion decoding (and, at block size 1, autoregressive decoding); see `decodings.generate`.

    on_step(seq, block, tokens, masked) after every denoising step of a sequence's block; on_block(seq,
    block, tokens) when it is finished, EOS trimmed. The caller has checked the block size and prompts.
    """
    config, bs = model.config, cfg.block_size
    device = next(model.parameters()).device
    mask_id, eos_ids = config.mask_token_id, config.eos_token_ids
    n = len(prompts)
    done = Rows(n, eos_ids, on_block)
    lengths = [len(p) for p in prompts]
    ends = [min(p + cfg.max_new_tokens, config.max_position_embeddings) for p in lengths]  # exclusive
    capacity = max(-(-e // bs) * bs for e in ends) + 2 * bs
    cache = model.new_cache(n, capacity)
    generators = None
    if cfg.temperature > 0:
        generators = [torch.Generator(device=device).manual_seed(cfg.seed + i) for i in range(n)]

    # Prefill the prompt's whole blocks; the rest of the prompt opens the first current block.
    forwards = done.forwards
    head = torch.zeros(n, config.vocab_size, device=device)  # logits for each current block's first slot
    cur = torch.full((n, bs), mask_id, dtype=torch.long, device=device)
    starts = []
    for i, prompt in enumerate(prompts):
        hist = len(prompt) // bs * bs
        ids = torch.tensor(prompt, dtype=torch.long, device=device)
        if hist:
            row = cache.row(i)
            head[i] = model.prefill(ids[None, :hist], row, block_size=bs)[0]
            cache.lengths[i] = row.lengths[0]
            forwards[i] += -(-hist // max(512 // bs * bs, bs))
        cur[i, : len(prompt) - hist] = ids[hist:]
        starts.append(hist)

    prev, pending = cur, False  # the previous block: finished, not yet in the caches
    arange = torch.arange(bs, device=device)
    block_no = 0
    eos = torch.tensor(eos_ids or [-1], device=device)
    lazy = bs > 1 and cfg.rule == "threshold" and cfg.fallback == "prefix"

    while done.rows:
        if done.stop_requested(should_stop):
            break
        rows = done.rows
        base = torch.tensor([starts[i] for i in rows], device=device)
        prompt_end = torch.tensor([lengths[i] for i in rows], device=device)
        limit = torch.tensor([ends[i] for i in rows], device=device)
        pos = base[:, None] + arange  # absolute positions of the block
        generated = pos >= prompt_end[:, None]
        committed = ~generated
        within = pos < limit[:, None]

        while True:
            # Positions after a committed EOS are never needed.
            is_eos = committed & generated & torch.isin(cur, eos)
            after_eos = (is_eos.cumsum(-1) - is_eos.long()) > 0
            todo = generated & within & ~after_eos & ~committed
            busy = todo.any(-1)
            if not bool(busy.any()):
                break
            r_idx, j_idx = todo.nonzero(as_tuple=True)  # the masked positions to predict, row-major
            scores = BlockScores(model, cache, cur, prev if pending else None, head, r_idx, j_idx)
            head = scores.head
            # A row counts the forward only if it read from it (not when `head` answered all it needed).
            users = busy if pending else todo[:, 1:].any(-1)
            pending = False
            for r in users.nonzero().flatten().tolist() if scores.called else ():
                forwards[rows[r]] += 1
            row_generators = None if generators is None else [generators[i] for i in rows]
            if lazy:
                picked, p_conf, p_entropy = predict_prefix(scores, cfg, row_generators, todo, r_idx, j_idx, mask_id)
            else:
                picked, p_conf, p_entropy = predict(
                    scores.logits(), cfg.temperature, row_generators, r_idx,
                    scores=bs > 1, entropy=cfg.rule == "entropy",
                )
            tokens = torch.full_like(cur, mask_id).index_put_((r_idx, j_idx), picked)
            if bs == 1:  # a one-slot block: every rule commits its single slot
                take = todo
            else:
                conf = torch.zeros(cur.shape, device=device).index_put_((r_idx, j_idx), p_conf)
                entropy = None if p_entropy is None else \
                    torch.zeros(cur.shape, device=device).index_put_((r_idx, j_idx), p_entropy)
                take = select(cfg, conf, entropy, todo)
            cur = torch.where(take, tokens, cur)
            committed = committed | take
            if on_step is not None:
                show = generated & within
                for r in busy.nonzero().flatten().tolist():
                    keep = show[r]
                    on_step(rows[r], block_no, cur[r][keep].tolist(), (~committed[r][keep]).tolist())

        # The block is finished for every row: hand out its text, retire rows that are done.
        now = done.elapsed()
        keep_rows = [r for r, i in enumerate(rows)
                     if done.finish_piece(i, block_no, cur[r][generated[r] & within[r]].tolist(),
                                          at_limit=starts[i] + bs >= ends[i], now=now)]
        for r in keep_rows:
            starts[rows[r]] += bs
        if len(keep_rows) < len(rows):
            if not done.retire(keep_rows):
                break
            cache = cache.select(keep_rows)
            index = torch.tensor(keep_rows, device=device)
            cur, head = cur.index_select(0, index), head.index_select(0, index)
        prev, pending = cur, True
        cur = torch.full((len(done.rows), bs), mask_id, dtype=torch.long, device=device)
        block_no += 1

    return done.outputs()


def predict_prefix(scores: BlockScores, cfg: SamplerConfig, generators, todo, r_idx, j_idx, mask_id):
    """Tokens and probabilities for the threshold rule with the prefix fallback, projecting in two rounds.

    Slots left unprojected get the mask token and probability -1: they lie after a slot that missed
    the threshold, so the prefix fallback would not commit them anyway.
    """
    rank = (todo.long().cumsum(-1) - 1)[r_idx, j_idx]  # order of each slot among its row's masked slots
    picked = torch.full_like(r_idx, mask_id)
    conf = torch.full(r_idx.shape, -1.0, device=r_idx.device)

    def fill(sel):
        tokens, probs, _ = predict(scores.logits(sel), cfg.temperature, generators, r_idx[sel], entropy=False)
        picked[sel], conf[sel] = tokens, probs

    first = rank < LAZY_SLOTS
    fill(first)
    missed = torch.zeros(todo.shape[0], device=r_idx.device).index_add_(
        0, r_idx[first], (conf[first] < cfg.threshold).float())
    rest = ~first & (missed == 0)[r_idx]
    if bool(rest.any()):
        fill(rest)
    return picked, conf, None

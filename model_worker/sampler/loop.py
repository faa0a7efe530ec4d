"""The decoding loop: blocks left to right, each denoised from all-mask, committed with exact caching.

All sequences of a batch advance block by block together: a row whose block is finished waits (its
logits are ignored) until every row has finished the block, then one forward over [finished block,
next block] commits the former into the caches and takes the first denoising step of the latter.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from .config import SamplerConfig
from .rules import predict, select
from .stats import GenerationOutput, GenerationStats

StepCallback = Callable[[int, int, list[int], list[bool]], None]
BlockCallback = Callable[[int, int, list[int]], None]


def check_request(model, prompts: list[list[int]], cfg: SamplerConfig) -> None:
    """Reject what the checkpoint cannot do, naming the offending value."""
    config = model.config
    if cfg.block_size not in config.trained_block_sizes:
        raise ValueError(
            f"block size {cfg.block_size} was not trained for this checkpoint; "
            f"trained block sizes: {list(config.trained_block_sizes)}"
        )
    context = config.max_position_embeddings
    for i, prompt in enumerate(prompts):
        if not prompt:
            raise ValueError(f"prompt {i} is empty; it needs at least one token")
        if len(prompt) >= context:
            raise ValueError(f"prompt {i} has {len(prompt)} tokens, longer than the context of {context} tokens")


def block_logits(model, cache, cur, prev, head, r_idx, j_idx):
    """Logits (K, V) for block positions (r_idx, j_idx), each read from the position before it.

    With `prev` (the finished previous block) the forward also folds it into the caches and refreshes
    `head`, the prediction for each block's first slot. Returns logits, head and whether the model ran.
    """
    n, bs = cur.shape
    if prev is not None:
        # [prev, cur]: slot j of cur is read from input j + bs - 1 (for j = 0, prev's last position).
        ids, width = (torch.cat([prev, cur], 1), 2 * bs) if bs > 1 else (prev, 1)
        heads = torch.arange(n, device=cur.device) * width + bs - 1
        if bs == 1:  # the one slot is read from the head itself
            out = model.decode(ids, cache, block_size=1, commit=1, keep=heads)
            return out.index_select(0, r_idx), out, True
        out = model.decode(ids, cache, block_size=bs, commit=1,
                           keep=torch.cat([heads, r_idx * width + j_idx + bs - 1]))
        return out[n:], out[:n], True
    inside = j_idx > 0  # slot 0 is read from the previous block: its prediction is `head`, already known
    logits = head.index_select(0, r_idx)
    if bool(inside.any()):
        src = r_idx[inside] * bs + j_idx[inside] - 1
        logits[inside] = model.decode(cur, cache, block_size=bs, keep=src)
        return logits, head, True
    return logits, head, False


@torch.inference_mode()
def generate(
    model,
    prompts: list[list[int]],
    cfg: SamplerConfig,
    on_step: StepCallback | None = None,
    on_block: BlockCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[GenerationOutput]:
    """Generate a continuation for every prompt; callbacks see drafts and finished blocks (generated part).

    on_step(seq, block, tokens, masked) after every denoising step of a sequence's block; on_block(seq,
    block, tokens) when it is finished, EOS trimmed. `block` counts this call's blocks from 0.
    """
    check_request(model, prompts, cfg)
    start = time.perf_counter()
    config, bs = model.config, cfg.block_size
    device = next(model.parameters()).device
    mask_id, eos_ids = config.mask_token_id, config.eos_token_ids
    n = len(prompts)
    lengths = [len(p) for p in prompts]
    ends = [min(p + cfg.max_new_tokens, config.max_position_embeddings) for p in lengths]  # exclusive
    capacity = max(-(-e // bs) * bs for e in ends) + 2 * bs
    cache = model.new_cache(n, capacity)
    generators = None
    if cfg.temperature > 0:
        generators = [torch.Generator(device=device).manual_seed(cfg.seed + i) for i in range(n)]

    # Prefill the prompt's whole blocks; the rest of the prompt opens the first current block.
    forwards = [0] * n
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

    rows = list(range(n))  # original index of every row still in the batch
    out_tokens: list[list[int]] = [[] for _ in range(n)]
    stopped: list[str | None] = [None] * n
    finish = [0.0] * n
    first_block = [0.0] * n
    prev, pending = cur, False  # the previous block: finished, not yet in the caches
    arange = torch.arange(bs, device=device)
    block_no = 0
    eos = torch.tensor(eos_ids or [-1], device=device)

    while rows:
        if should_stop is not None and should_stop():
            for i in rows:
                stopped[i], finish[i] = "stop", time.perf_counter() - start
            break
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
            logits, head, called = block_logits(model, cache, cur, prev if pending else None, head, r_idx, j_idx)
            # A row counts the forward only if it read from it (not when `head` answered all it needed).
            users = busy if pending else todo[:, 1:].any(-1)
            pending = False
            logits[:, mask_id] = float("-inf")
            for r in users.nonzero().flatten().tolist() if called else ():
                forwards[rows[r]] += 1
            picked, p_conf, p_entropy = predict(
                logits, cfg.temperature, None if generators is None else [generators[i] for i in rows], r_idx,
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
        now = time.perf_counter() - start
        keep_rows = []
        for r, i in enumerate(rows):
            piece = cur[r][generated[r] & within[r]].tolist()
            hit = next((j for j, t in enumerate(piece) if t in eos_ids), None)
            if hit is not None:
                piece = piece[:hit]
            out_tokens[i].extend(piece)
            if block_no == 0:
                first_block[i] = now
            if on_block is not None:
                on_block(i, block_no, piece)
            if hit is not None:
                stopped[i] = "eos"
            elif starts[i] + bs >= ends[i]:
                stopped[i] = "max_new_tokens"
            if stopped[i]:
                finish[i] = time.perf_counter() - start
            else:
                keep_rows.append(r)
                starts[i] += bs
        if len(keep_rows) < len(rows):
            if not keep_rows:
                break
            cache = cache.select(keep_rows)
            index = torch.tensor(keep_rows, device=device)
            cur, head = cur.index_select(0, index), head.index_select(0, index)
            rows = [rows[r] for r in keep_rows]
        prev, pending = cur, True
        cur = torch.full((len(rows), bs), mask_id, dtype=torch.long, device=device)
        block_no += 1

    return [
        GenerationOutput(
            tokens=out_tokens[i],
            stopped_by=stopped[i] or "stop",
            stats=GenerationStats.measure(len(out_tokens[i]), forwards[i], finish[i], first_block[i]),
        )
        for i in range(n)
    ]

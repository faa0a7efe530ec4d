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
from .loop import BlockCallback, StepCallback
from .rows import Rows
from .stats import GenerationOutput

# Prompt tokens per prefill forward. A forward reads the weights of every expert its tokens route to,
# which for a few hundred tokens of a 256-expert MoE is all of them: at the Clover-35B-A3B shape a
# 4,096-token prompt in 512-token pieces has a weight-read floor of 114 ms on an H200 (4.8 TB/s), in one
# piece 14 ms (`bench --scale`). So a GPU prefills in pieces of up to 4,096 tokens. On a CPU 512-token
# pieces were a little faster (the demo checkpoint, 4,096 tokens, one thread: 0.36 s against 0.47-0.51 s
# for one piece) and gave the same logits.
PREFILL_CHUNK = 512
PREFILL_CHUNKS = {"cuda": 4096}


def prefill_chunk(device: torch.device | str) -> int:
    """Prompt tokens per prefill forward on this device."""
    return PREFILL_CHUNKS.get(torch.device(device).type, PREFILL_CHUNK)


class _Draws:
    """Per-sequence random draws of a fixed shape each round, so a sequence's sample does not depend on
    the batch it runs in (greedy decoding draws nothing). Sequence i draws from seed `seed + i` unless
    it joined with a seed of its own."""

    def __init__(self, cfg: SamplerConfig, n: int, device):
        self.temperature = cfg.temperature
        self.seed = cfg.seed
        self.device = device
        self.generators: list[torch.Generator] | None = None if cfg.temperature == 0 else []
        for _ in range(n):
            self.add()

    def add(self, seed: int | None = None) -> None:
        """Draws for the next sequence."""
        if self.generators is not None:
            i = len(self.generators)
            self.generators.append(torch.Generator(device=self.device).manual_seed(self.seed + i if seed is None
                                                                                   else seed))

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


def draft_and_verify(model, cache, newest: torch.Tensor, bs: int, draws: _Draws, rows: list[int],
                     forwards: tuple[Callable, Callable] | None = None):
    """A round's two forwards, without reading the device: drafts (M, B - 1), accepted draft counts (M,)
    and the token after each accepted run (M,). `newest` (M,) opens each row's window. `forwards`
    replaces the draft and verify calls (ids -> logits), for instance by captured ones
    (`model_worker.clover.graphs`)."""
    mask_id = model.config.mask_token_id
    draft_call, verify_call = forwards or (
        lambda ids: model.decode(ids, cache, block_size=bs, keep=slice(0, bs - 1)),
        lambda ids: model.decode(ids, cache, block_size=1, trial=True),
    )
    window = torch.full((newest.shape[0], bs), mask_id, dtype=torch.long, device=newest.device)
    window[:, 0] = newest
    draft_logits = draft_call(window)  # (M, B - 1, V)
    draft_logits[..., mask_id] = float("-inf")
    drafts = (draft_logits.argmax(-1) if draws.temperature == 0
              else draws.sample((draft_logits / draws.temperature).softmax(-1), rows))
    verify_logits = verify_call(torch.cat([window[:, :1], drafts], 1))
    verify_logits[..., mask_id] = float("-inf")
    accepted, nxt = _verify(draft_logits, verify_logits, drafts, draws, rows)
    return drafts, accepted, nxt


def captured_round(model, cache, bs: int) -> tuple[Callable, Callable]:
    """The draft and verify forwards of `draft_and_verify` for every row of `cache`, captured (a Clover
    model: `model_worker.clover.graphs`)."""
    from model_worker.clover.graphs import CapturedForward

    rows = len(cache.lengths)
    return (CapturedForward(model, cache, (rows, bs), block_size=bs, keep=slice(0, bs - 1)),
            CapturedForward(model, cache, (rows, bs), block_size=1, trial=True))


class VerifiedBatch:
    """Verified decoding over a batch that sequences join and leave between rounds (continuous batching).

    `admit` prefills new prompts, each in a cache of its own, and joins them to the running batch;
    `round` runs one draft-and-verify round over every running sequence, hands each its kept tokens
    and retires those that are done. A sequence's text does not depend on when it joined or who ran
    beside it: every row reads only its own history and its own draws.

    on_step(seq, round, tokens, masked) once per round: the kept tokens, then the rejected drafts as
    masked; on_block(seq, round, tokens) with the round's kept tokens, EOS trimmed. `seq` is the index
    `admit` returned; `round` counts that sequence's rounds from 0.
    """

    def __init__(self, model, cfg: SamplerConfig, on_step: StepCallback | None = None,
                 on_block: BlockCallback | None = None):
        self.model, self.cfg, self.on_step = model, cfg, on_step
        self.device = next(model.parameters()).device
        self.done = Rows(0, model.config.eos_token_ids, on_block)
        self.draws = _Draws(cfg, 0, self.device)
        self.cache = None
        self.newest: torch.Tensor | None = None  # (M,) the token opening each running row's next draft
        self.ends: list[int] = []  # per sequence: its position limit (exclusive)
        self.length: list[int] = []  # per sequence: committed tokens, prompt included
        self.rounds: list[int] = []  # per sequence: rounds run
        self.stops: list[Callable[[], bool] | None] = []  # per sequence: asked between rounds
        self.forwards: tuple[Callable, Callable] | None = None  # with cfg.graphs: captured against self.cache

    @property
    def running(self) -> list[int]:
        """The sequences still in the batch, in row order."""
        return list(self.done.rows)

    @torch.inference_mode()
    def admit(self, prompts: list[list[int]], *, max_new_tokens: int | None = None, seeds: list[int] | None = None,
              should_stop: Callable[[], bool] | None = None) -> list[int]:
        """Prefill `prompts` and add them to the batch; their sequence indices. Between rounds only. A
        prefill that fails adds none of them and leaves the running batch as it was."""
        model, bs = self.model, self.cfg.block_size
        budget = self.cfg.max_new_tokens if max_new_tokens is None else max_new_tokens
        joined_at = self.done.elapsed()
        ends = [min(len(p) + budget, model.config.max_position_embeddings) for p in prompts]
        # The cache holds every committed token but the newest, which opens the next round's draft. The
        # new prompts are prefilled together (`prefill_rows`), into rows that then join the batch.
        histories = [torch.tensor(p[:-1], dtype=torch.long, device=self.device) for p in prompts]
        fresh = model.new_cache(len(prompts), max(ends) + bs)
        chunk = prefill_chunk(self.device)
        if len(prompts) > 1:
            model.prefill_rows(histories, fresh, chunk=chunk)
        elif len(histories[0]):
            model.prefill(histories[0][None], fresh, block_size=1, chunk=chunk)
        newest = torch.tensor([p[-1] for p in prompts], device=self.device)
        self.cache = fresh if self.cache is None else type(fresh).join([self.cache, fresh])
        self.forwards = None
        self.newest = newest if self.newest is None else torch.cat([self.newest, newest])
        seqs = []
        for k, (prompt, end) in enumerate(zip(prompts, ends, strict=True)):
            i = self.done.add(at=joined_at)
            self.draws.add(None if seeds is None else seeds[k])
            self.ends.append(end)
            self.length.append(len(prompt))
            self.rounds.append(0)
            self.stops.append(should_stop)
            # A page's forwards are counted as if it ran alone, whoever shared them.
            self.done.forwards[i] += -(-(len(prompt) - 1) // chunk)
            seqs.append(i)
        return seqs

    @torch.inference_mode()
    def round(self, should_stop: Callable[[], bool] | None = None) -> list[int]:
        """One round over every running sequence; the sequences that finished in it (or were stopped:
        all of them when `should_stop` says so, else each whose own `should_stop` does)."""
        done, rows = self.done, self.done.rows
        if not rows:
            return []
        if done.stop_requested(should_stop):
            return self._leave([], rows)
        stopping = [r for r, i in enumerate(rows) if self.stops[i] is not None and self.stops[i]()]
        for r in stopping:
            done.stop(rows[r])
        if stopping:
            finished = [rows[r] for r in stopping]
            self._shrink([r for r in range(len(rows)) if r not in stopping])
            rows = done.rows
            if not rows:
                return finished
        else:
            finished = []
        if self.cfg.graphs and self.forwards is None:
            self.forwards = captured_round(self.model, self.cache, self.cfg.block_size)
        drafts, accepted, nxt = draft_and_verify(self.model, self.cache, self.newest, self.cfg.block_size,
                                                 self.draws, rows, self.forwards)

        # The round's one host synchronisation: drafts, accepted count and next token of every row at once.
        read = torch.cat([drafts, accepted[:, None], nxt[:, None]], 1).tolist()
        now = done.elapsed()
        counts, keep_rows = [], []
        for r, i in enumerate(rows):
            done.forwards[i] += 2
            *drafted, a, after = read[r]
            new = (drafted[:a] + [after])[: self.ends[i] - self.length[i]]
            if self.on_step is not None:
                shown = new + drafted[a + 1:]
                self.on_step(i, self.rounds[i], shown, [False] * len(new) + [True] * (len(shown) - len(new)))
            self.length[i] += len(new)
            counts.append(len(new))  # the round's input [newest, new[:-1]] becomes history
            if done.finish_piece(i, self.rounds[i], new, at_limit=self.length[i] >= self.ends[i], now=now):
                keep_rows.append(r)  # a row that runs on kept its whole `new`: its newest token is `nxt`
            self.rounds[i] += 1
        self.model.accept(self.cache, counts, block_size=1)
        self.newest = nxt
        finished += [i for r, i in enumerate(rows) if r not in keep_rows]
        if len(keep_rows) < len(rows):
            self._shrink(keep_rows)
        return finished

    def _leave(self, finished: list[int], rows: list[int]) -> list[int]:
        self._shrink([])
        return finished + list(rows)

    def _shrink(self, keep_rows: list[int]) -> None:
        """Keep only the batch rows `keep_rows` (positions in the running list)."""
        self.forwards = None  # a captured forward belongs to the cache it was recorded against
        if not self.done.retire(keep_rows):
            self.cache, self.newest = None, None
            return
        self.cache = self.cache.select(keep_rows)
        self.newest = self.newest.index_select(0, torch.tensor(keep_rows, device=self.device))

    def outputs(self, seqs: list[int] | None = None) -> list[GenerationOutput]:
        return self.done.outputs(seqs)

    def forget(self, seq: int) -> None:
        """Drop what a finished sequence still holds (its tokens, draws and stop check): a batch that
        never empties, in a worker that runs for weeks, keeps only what its running sequences need."""
        if seq in self.done.rows:
            raise ValueError(f"sequence {seq} is still running")
        self.done.tokens[seq] = []
        self.stops[seq] = None
        if self.draws.generators is not None:
            self.draws.generators[seq] = None


def generate_verified(
    model,
    prompts: list[list[int]],
    cfg: SamplerConfig,
    on_step: StepCallback | None = None,
    on_block: BlockCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[GenerationOutput]:
    """Verified decoding (see `decodings.generate`) of a fixed batch: every prompt joins at once; a round
    plays the part of a block for the callbacks. The caller has checked that block sizes 1 and
    `cfg.block_size` were trained."""
    batch = VerifiedBatch(model, cfg, on_step, on_block)
    batch.admit(prompts)
    while batch.running:
        batch.round(should_stop)
    return batch.outputs()

"""The bookkeeping both decoding loops share: which sequences still run, and what each has written.

A loop asks `stop_requested` once per block (or round), hands each sequence's finished piece to
`finish_piece`, then `retire`s the sequences that are done and shrinks its tensors to the rows left.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .stats import GenerationOutput, outputs


class Rows:
    """Per-sequence records of one `generate` call; `rows` maps batch rows to sequence indices."""

    def __init__(self, n: int, eos_ids, on_block: Callable[[int, int, list[int]], None] | None):
        self.start = time.perf_counter()
        self.rows = list(range(n))  # original index of every sequence still in the batch
        self.eos_ids = set(eos_ids or [])
        self.on_block = on_block
        self.tokens: list[list[int]] = [[] for _ in range(n)]
        self.stopped: list[str | None] = [None] * n
        self.forwards = [0] * n
        self.finish = [0.0] * n
        self.first_block = [0.0] * n

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def stop_requested(self, should_stop: Callable[[], bool] | None) -> bool:
        """Ask `should_stop`; when it says stop, every running sequence ends here."""
        if should_stop is None or not should_stop():
            return False
        for i in self.rows:
            self.stopped[i], self.finish[i] = "stop", self.elapsed()
        return True

    def finish_piece(self, i: int, block: int, piece: list[int], *, at_limit: bool, now: float) -> bool:
        """Record sequence `i`'s finished block (cut before EOS), tell `on_block`; whether it runs on.

        `at_limit`: the sequence has no room for another block; `now`: when the block finished.
        """
        hit = next((j for j, t in enumerate(piece) if t in self.eos_ids), None)
        if hit is not None:
            piece = piece[:hit]
        self.tokens[i].extend(piece)
        if block == 0:
            self.first_block[i] = now
        if self.on_block is not None:
            self.on_block(i, block, piece)
        if hit is not None:
            self.stopped[i] = "eos"
        elif at_limit:
            self.stopped[i] = "max_new_tokens"
        if self.stopped[i]:
            self.finish[i] = self.elapsed()
            return False
        return True

    def retire(self, keep: list[int]) -> bool:
        """Keep only the batch rows `keep` (positions in `rows`); whether any sequence still runs."""
        self.rows = [self.rows[r] for r in keep]
        return bool(self.rows)

    def outputs(self) -> list[GenerationOutput]:
        return outputs(self.tokens, self.stopped, self.forwards, self.finish, self.first_block)

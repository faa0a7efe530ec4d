"""The bookkeeping both decoding loops share: which sequences still run, and what each has written.

A loop asks `stop_requested` once per block (or round), hands each sequence's finished piece to
`finish_piece`, then `retire`s the sequences that are done and shrinks its tensors to the rows left.
A continuous batch `add`s sequences between rounds; each sequence's times count from its own start.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .stats import GenerationOutput, outputs


class Rows:
    """Per-sequence records of one `generate` call; `rows` maps batch rows to sequence indices."""

    def __init__(self, n: int, eos_ids, on_block: Callable[[int, int, list[int]], None] | None):
        self.start = time.perf_counter()
        self.rows: list[int] = []  # original index of every sequence still in the batch
        self.eos_ids = set(eos_ids or [])
        self.on_block = on_block
        self.tokens: list[list[int]] = []
        self.stopped: list[str | None] = []
        self.forwards: list[int] = []
        self.finish: list[float] = []  # seconds from the call's start
        self.first_block: list[float] = []
        self.started: list[float] = []  # when each sequence joined, from the call's start
        for _ in range(n):
            self.add(at=0.0)

    def add(self, at: float | None = None) -> int:
        """A new sequence, running from now (or `at`); its index, which it keeps when others leave."""
        i = len(self.tokens)
        self.tokens.append([])
        self.stopped.append(None)
        self.forwards.append(0)
        self.finish.append(0.0)
        self.first_block.append(0.0)
        self.started.append(self.elapsed() if at is None else at)
        self.rows.append(i)
        return i

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def stop_requested(self, should_stop: Callable[[], bool] | None) -> bool:
        """Ask `should_stop`; when it says stop, every running sequence ends here."""
        if should_stop is None or not should_stop():
            return False
        for i in self.rows:
            self.stopped[i], self.finish[i] = "stop", self.elapsed()
        return True

    def stop(self, i: int) -> None:
        """Sequence `i` ends here, asked to stop (the caller retires its row)."""
        self.stopped[i], self.finish[i] = "stop", self.elapsed()

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

    def outputs(self, seqs: list[int] | None = None) -> list[GenerationOutput]:
        """Every sequence's output (or those of `seqs`), its times counted from when it joined."""
        seqs = range(len(self.tokens)) if seqs is None else seqs
        return outputs([self.tokens[i] for i in seqs], [self.stopped[i] for i in seqs],
                       [self.forwards[i] for i in seqs], [self.finish[i] - self.started[i] for i in seqs],
                       [self.first_block[i] - self.started[i] if self.first_block[i] else 0.0 for i in seqs])

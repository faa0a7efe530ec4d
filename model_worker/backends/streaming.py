"""Token streams into a `PageSink`: pieces grouped into committed blocks, and the stats of a reply.

A backend that streams tokens (a causal LM, a chat server) has no blocks of its own; `TokenBlocks`
closes one every `block_tokens` tokens or `interval_s` seconds, whichever comes first, so the live view
and the Redis stream get a few events a second, and `should_stop()` is asked once per block.
"""

from __future__ import annotations

import time

from model_worker.backends.base import PageSink

BLOCK_TOKENS = 16
BLOCK_INTERVAL_S = 0.1


class TokenBlocks:
    def __init__(self, sink: PageSink, *, block_tokens: int = BLOCK_TOKENS, interval_s: float = BLOCK_INTERVAL_S,
                 clock=time.monotonic):
        self.sink, self.block_tokens, self.interval_s, self.clock = sink, block_tokens, interval_s, clock
        self.started = clock()
        self.first_block_s: float | None = None
        self.blocks = 0
        self.tokens = 0  # committed so far
        self.text: list[str] = []  # committed pieces
        self._pending: list[str] = []
        self._pending_tokens = 0
        self._opened = self.started
        self.stopped = False

    def add(self, text: str, tokens: int = 1) -> bool:
        """Take one streamed piece; False once the sink asked to stop (checked when a block closes)."""
        self._pending.append(text)
        self._pending_tokens += tokens
        if self._pending_tokens >= self.block_tokens or self.clock() - self._opened >= self.interval_s:
            self.flush()
            self.stopped = self.sink.should_stop()
        return not self.stopped

    def flush(self) -> None:
        """Commit what is pending as one block (nothing when nothing is pending)."""
        if not self._pending and not self._pending_tokens:
            return
        text = "".join(self._pending)
        self.sink.on_commit(self.blocks, text, self._pending_tokens)
        self.text.append(text)
        self.tokens += self._pending_tokens
        self.blocks += 1
        if self.first_block_s is None:
            self.first_block_s = self.clock() - self.started
        self._pending, self._pending_tokens = [], 0
        self._opened = self.clock()

    def stats(self, *, forwards: int | None, tokens: int | None = None) -> dict:
        """The reply's figures; `tokens` overrides the count when the server reports its own."""
        return reply_stats(tokens if tokens is not None else self.tokens, forwards,
                           self.clock() - self.started, self.first_block_s)


def reply_stats(tokens: int, forwards: int | None, seconds: float, first_block_s: float | None) -> dict:
    """The stats dict every backend reports (`forwards` None: the server does not say)."""
    return {
        "tokens": tokens,
        "forwards": forwards,
        "tokens_per_forward": round(tokens / forwards, 4) if forwards else None,
        "forwards_per_s": round(forwards / seconds, 4) if forwards and seconds else None,
        "tokens_per_s": round(tokens / seconds, 4) if seconds else 0.0,
        "first_block_s": round(first_block_s or 0.0, 4),
        "seconds": round(seconds, 4),
    }

"""The page sink that streams a generation's drafts, commits and stats into its Redis stream."""

from __future__ import annotations

import threading
import time

from model_worker.contract import stream
from model_worker.contract.events import Commit, Draft, Event, Stats
from model_worker.worker.claim import Claim

# While a page is written, a round trip to Redis at most this often (about as often as a screen redraws
# drafts; a stop request waits no longer than this plus one block), and at least every few seconds.
FLUSH_INTERVAL_S = 0.05
HEARTBEAT_EVERY_S = 5.0


class StreamSink:
    """A `PageSink` that streams `draft`, `commit` and `stats` events into the generation's stream.

    A Redis round trip would stall the decoding loop for as long as it takes, so a writer thread does
    them: as soon as the loop queues something, but at most every FLUSH_INTERVAL_S, it appends what
    is queued and reads the stop flags, in one round trip (the claim beats on its own thread). `should_stop`
    answers from the latest flags (the first time it asks Redis itself, before the model runs); a
    failed write is raised to the loop at its next call. `close` stops the writer and writes what is
    left: the task calls it before handing the outcome on, so every commit precedes `done` in the stream.
    """

    def __init__(self, r, generation_id: str, *, maxlen: int = stream.DEFAULT_MAXLEN,
                 ttl_s: int = stream.DEFAULT_TTL_S, clock=time.monotonic, claim: Claim | None = None):
        self.r, self.generation_id, self.clock, self.claim = r, generation_id, clock, claim
        self.limits = {"maxlen": maxlen, "ttl_s": ttl_s}
        self.started = clock()
        self.tokens = 0
        self.stop = False
        self.exchanged = float("-inf")  # when the last round trip ended
        self.pending: list[Event] = []
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.closing = False
        self.error: BaseException | None = None
        self.writer: threading.Thread | None = None

    def on_draft(self, block: int, pieces: list[str | None]) -> None:
        self._queue(Draft(block=block, pieces=pieces))

    def on_commit(self, block: int, text: str, tokens: int) -> None:
        self.tokens += tokens
        seconds = self.clock() - self.started
        self._queue(Commit(block=block, text=text),
                    Stats(blocks=block + 1, tokens=self.tokens, seconds=round(seconds, 3),
                          tokens_per_s=round(self.tokens / seconds, 1) if seconds else 0.0))

    def should_stop(self) -> bool:
        self._raise()
        if self.claim is not None and self.claim.lost:
            return True  # another worker holds the generation now: this one must not write on
        if self.writer is None:
            self._exchange()
            self._start()
        if self.clock() - self.exchanged >= FLUSH_INTERVAL_S:
            self.wake.set()  # flags older than the interval: the writer reads them again now
        return self.stop

    def close(self, *, write: bool = True) -> None:
        """Stop the writer thread, then (with `write`) write what is left and read the flags once more."""
        if self.writer is not None:
            self.closing = True
            self.wake.set()
            self.writer.join()
            self.writer = None
        if write:
            self._raise()
            self._exchange()

    def _queue(self, *bodies: Event) -> None:
        self._raise()
        with self.lock:
            self.pending.extend(bodies)
        if self.writer is None:
            self._start()
        self.wake.set()

    def _start(self) -> None:
        self.writer = threading.Thread(target=self._write, name=f"stream-{self.generation_id}", daemon=True)
        self.writer.start()

    def _write(self) -> None:
        while True:
            self.wake.wait(HEARTBEAT_EVERY_S)  # something queued, flags asked for, closing, or a heartbeat due
            self.wake.clear()
            pause = self.exchanged + FLUSH_INTERVAL_S - self.clock()
            if pause > 0 and not self.closing:
                time.sleep(pause)  # what arrives meanwhile goes in the same round trip
            if self.closing:
                return
            try:
                self._exchange()
            except BaseException as exc:  # handed to the decoding loop, which raises it
                self.error = exc
                return

    def _exchange(self) -> None:
        with self.lock:
            bodies, self.pending = self.pending, []
        self.stop = stream.stop_due(stream.exchange(self.r, self.generation_id, bodies, **self.limits))
        self.exchanged = self.clock()

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error

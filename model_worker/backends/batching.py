"""Continuous batching for the Clover backend: one thread runs the model, and pages join its batch.

Pages are asked for from several threads at once (a Celery worker's thread pool). Each call hands its
prompt to the decoding thread and waits. That thread admits waiting pages between rounds, up to
`max_batch` sequences in all, runs one verified round over every running sequence
(`model_worker.sampler.verified.VerifiedBatch`), and hands each page its tokens through its own
callbacks; a page leaves the batch the round it finishes, and its caller returns. Pages decoded with
different settings (a repair re-samples at a temperature) run in batches of their own, round by round
in turn. A page's text is what it would be alone.

A callback or stop check that raises (the page's Redis stream is gone) ends that page only: it leaves
the batch at the next round and its caller gets the error. An error in the model's forward ends every
page of that batch.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from model_worker.sampler import GenerationOutput, SamplerConfig

log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Job:
    prompt: list[int]
    cfg: SamplerConfig
    on_step: Callable | None
    on_block: Callable | None
    should_stop: Callable[[], bool] | None
    done: threading.Event = field(default_factory=threading.Event)
    output: GenerationOutput | None = None
    error: BaseException | None = None
    shared_with: int = 1  # the most sequences it ran beside in one round, itself included

    def stop_asked(self) -> bool:
        if self.error is not None:
            return True
        if self.should_stop is None:
            return False
        try:
            return bool(self.should_stop())
        except Exception as exc:  # noqa: BLE001 - the page's own failure, handed to its caller
            self.error = exc
            return True

    def call(self, callback: Callable | None, *args) -> None:
        if callback is None or self.error is not None:
            return
        try:
            callback(*args)
        except Exception as exc:  # noqa: BLE001 - as above
            self.error = exc

    def finish(self, output: GenerationOutput | None = None, error: BaseException | None = None) -> None:
        self.output = output
        self.error = self.error or error
        self.done.set()


class _Group:
    """The running batch of one decoding setting, and which job each of its sequences is."""

    def __init__(self, model, cfg: SamplerConfig):
        from model_worker.sampler.verified import VerifiedBatch

        self.jobs: dict[int, _Job] = {}
        self.batch = VerifiedBatch(model, cfg, on_step=self._step, on_block=self._block)

    def _step(self, seq: int, block: int, tokens: list[int], masked: list[bool]) -> None:
        job = self.jobs[seq]
        job.call(job.on_step, 0, block, tokens, masked)

    def _block(self, seq: int, block: int, tokens: list[int]) -> None:
        job = self.jobs[seq]
        job.call(job.on_block, 0, block, tokens)

    def admit(self, job: _Job) -> None:
        [seq] = self.batch.admit([job.prompt], max_new_tokens=job.cfg.max_new_tokens, seeds=[job.cfg.seed],
                                 should_stop=job.stop_asked)
        self.jobs[seq] = job

    def round(self) -> None:
        running = len(self.batch.running)
        for seq in self.batch.running:
            self.jobs[seq].shared_with = max(self.jobs[seq].shared_with, running)
        for seq in self.batch.round():
            job = self.jobs.pop(seq)
            job.finish(self.batch.outputs([seq])[0])
            self.batch.forget(seq)

    def fail(self, exc: BaseException) -> None:
        for job in self.jobs.values():
            job.finish(error=exc)
        self.jobs.clear()


class BatchedDecoder:
    """Verified decoding of pages asked for from many threads, in shared batches of up to `max_batch`."""

    def __init__(self, model, max_batch: int):
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        self.model, self.max_batch = model, max_batch
        self._waiting: queue.Queue[_Job] = queue.Queue()
        self._groups: dict[SamplerConfig, _Group] = {}
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def generate(self, prompt: list[int], cfg: SamplerConfig, on_step=None, on_block=None,
                 should_stop: Callable[[], bool] | None = None) -> tuple[GenerationOutput, int]:
        """Decode one prompt in the shared batch; its output, and the most sequences it shared a round with.
        Callbacks get sequence 0, as for a batch of one."""
        if cfg.decoding != "verified":
            raise ValueError(f"continuous batching runs verified decoding, not {cfg.decoding!r}")
        job = _Job(list(prompt), cfg, on_step, on_block, should_stop)
        self._ensure_running()
        self._waiting.put(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.output, job.shared_with

    def _ensure_running(self) -> None:
        with self._start:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="clover-batch", daemon=True)
                self._thread.start()

    def _running(self) -> int:
        return sum(len(g.jobs) for g in self._groups.values())

    def _admit(self) -> None:
        """Take waiting pages while there is room; wait for one when nothing runs."""
        while self._running() < self.max_batch:
            try:
                job = self._waiting.get(block=self._running() == 0)
            except queue.Empty:
                return
            key = replace(job.cfg, seed=0, max_new_tokens=1)
            group = self._groups.get(key) or self._groups.setdefault(key, _Group(self.model, key))
            try:
                group.admit(job)
            except Exception as exc:  # noqa: BLE001 - this page's prefill failed; the batch runs on
                log.exception("a page could not join the batch")
                job.finish(error=exc)

    def _run(self) -> None:
        while True:
            try:
                self._serve()
            except Exception as exc:  # noqa: BLE001 - never leave a caller waiting on a dead thread
                log.exception("the decoding thread failed; its pages fail")
                for group in self._groups.values():
                    group.fail(exc)
                self._groups.clear()

    def _serve(self) -> None:
        while True:
            self._admit()
            for key, group in list(self._groups.items()):
                if not group.jobs:
                    del self._groups[key]
                    continue
                try:
                    group.round()
                except Exception as exc:  # noqa: BLE001 - the forward failed: every page of the batch fails
                    log.exception("a batched round failed; its %d pages fail", len(group.jobs))
                    group.fail(exc)
                    del self._groups[key]

"""`bench --continuous N`: N pages asked for at once, written one after another and then in one shared batch.

Both runs use the same loaded weights, prompts and verified decoding; the pages must come out the same.
The figures: wall time and tokens per second in all for each way, their ratio (one run, one machine),
and how long each learner waits for the page's first block, counted from the moment all asked.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from model_worker.backends.clover import CloverBackend
from model_worker.worker.run import NullSink


def continuous_report(path: Path, requests: list, *, device: str, threads: int | None,
                      max_new_tokens: int | None) -> dict:
    """`requests`: the `PageRequest`s asked for at once."""
    pages = len(requests)
    alone = CloverBackend(path=path, device=device, threads=threads, max_new_tokens=max_new_tokens)
    shared = CloverBackend(path=path, device=device, threads=threads, max_new_tokens=max_new_tokens, batch=pages)
    alone.generate_page(requests[0], NullSink())  # warm up

    started = time.perf_counter()
    one_by_one, waited = [], []  # waited: from the moment all were asked to each page's first block
    for r in requests:
        before = time.perf_counter() - started
        one_by_one.append(alone.generate_page(r, NullSink()))
        waited.append(round(before + one_by_one[-1].stats["first_block_s"], 3))
    sequential_s = time.perf_counter() - started

    results: list = [None] * len(requests)
    gate = threading.Barrier(len(requests))

    def ask(i: int) -> None:
        gate.wait()
        results[i] = shared.generate_page(requests[i], NullSink())

    workers = [threading.Thread(target=ask, args=(i,)) for i in range(len(requests))]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    batched_s = time.perf_counter() - started

    tokens = sum(r.stats["tokens"] for r in one_by_one)
    return {
        "pages": len(requests),
        "tokens": tokens,
        "same_pages": [a.html for a in one_by_one] == [b.html for b in results],
        "one_by_one": {"seconds": round(sequential_s, 2), "tokens_per_s": round(tokens / sequential_s, 1),
                       "first_block_s": waited},
        "continuous": {"seconds": round(batched_s, 2), "tokens_per_s": round(tokens / batched_s, 1),
                       "largest_batch": max(r.stats["batch"] for r in results),
                       "first_block_s": [r.stats["first_block_s"] for r in results]},
        "speedup": round(sequential_s / batched_s, 2),
    }


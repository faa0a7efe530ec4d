"""Decoding forwards captured as CUDA graphs: one launch per forward instead of thousands.

At the Clover-35B-A3B shape a one-token step is about 6,500 operators, and at batch 1 the GPU waits
on Python launching them (docs/benchmarks.md). A `CapturedForward` records one `decode` call, in its
static form (`decode(..., static=True)`: shapes fixed by the cache's capacity, nothing read from the
host), against one cache, and replays it with new input ids. The host side of the call (committed
lengths, the trial states `accept` reads) is redone after every replay, so callers use it as they use
`decode`. Without CUDA it runs the same static forward eagerly, so its bookkeeping is tested on any
device; the capture itself runs only on a GPU.

A captured forward belongs to its cache: a cache that `select` or `join` replaces needs new captures.
"""

from __future__ import annotations

import torch

from .cache import CloverCache


class CapturedForward:
    """`model.decode(ids, cache, **kwargs)` for ids of one shape, replayed from a CUDA graph on CUDA."""

    def __init__(self, model, cache: CloverCache, shape: tuple[int, int], *, block_size: int, commit: int = 0,
                 trial: bool = False, keep: slice | torch.Tensor = slice(None), project: bool = True,
                 warmup: int = 2, capture: bool | None = None):
        if shape[0] != len(cache.lengths):
            raise ValueError(f"ids of {shape[0]} rows for a cache of {len(cache.lengths)}")
        self.model, self.cache = model, cache
        self.kwargs = dict(block_size=block_size, commit=commit, trial=trial, keep=keep, project=project,
                           static=True)
        self.advance = commit * block_size
        self.ids = torch.zeros(shape, dtype=torch.long, device=cache.device)
        self.graph = None
        self.out = None
        self.trials: list = []
        if cache.device.type == "cuda" if capture is None else capture:
            self._capture(warmup)

    @torch.inference_mode()
    def __call__(self, ids: torch.Tensor) -> torch.Tensor:
        if max(self.cache.lengths) + self.ids.shape[1] > self.cache.capacity:
            raise ValueError(f"cache holds {self.cache.capacity} positions, this forward needs "
                             f"{max(self.cache.lengths) + self.ids.shape[1]}")
        if self.graph is None:
            return self.model.decode(ids, self.cache, **self.kwargs)
        self.ids.copy_(ids)
        self.graph.replay()
        if self.advance:
            self.cache.lengths[:] = [x + self.advance for x in self.cache.lengths]
        for state, trial in self.trials:
            state.trial = trial
        return self.out

    @torch.inference_mode()
    def _capture(self, warmup: int) -> None:
        """Warm up on a side stream (workspaces, cached tables), then record one call. Neither leaves a
        trace in the history: the GDN states are restored and the lengths rewound."""
        cache = self.cache
        saved = [(s.recurrent.clone(), s.conv.clone()) if s.recurrent is not None else None for s in cache.layers]

        def restore():
            for state, kept in zip(cache.layers, saved, strict=True):
                state.trial = None
                if kept is not None:
                    state.recurrent.copy_(kept[0])
                    state.conv.copy_(kept[1])

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                self.model.decode(self.ids, cache, **self.kwargs)
                if self.advance:
                    cache.rewind(self.advance)
                restore()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = self.model.decode(self.ids, cache, **self.kwargs)
        # Capture ran the host side once and no kernel: take back the host lengths it advanced.
        if self.advance:
            cache.lengths[:] = [x - self.advance for x in cache.lengths]
        self.trials = [(s, s.trial) for s in cache.layers if s.trial is not None]
        for state, _ in self.trials:
            state.trial = None

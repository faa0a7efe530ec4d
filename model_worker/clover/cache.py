"""The per-sequence history a Clover model decodes against: keys, values, GDN and conv state, committed lengths."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .layers import LayerState


@dataclass
class CloverCache:
    """Preallocated per-sequence history: attention keys/values, GDN and conv state, committed length.

    The committed lengths live twice: `positions` on the device, which forwards read (rotary positions,
    masks, key slots), so a forward never copies them from the host; and `lengths` on the host, which
    the caller knows anyway (it decides every commit) and which sizes the forward (keys to attend over).
    `decode` and `accept` advance both.
    """

    layers: list[LayerState]
    lengths: list[int]  # committed tokens per row (whole blocks of the block size that committed them)
    positions: torch.Tensor | None = None  # (N,) long on the device: the same counts

    def __post_init__(self):
        if self.positions is None:
            self.positions = torch.tensor(self.lengths, dtype=torch.long, device=self.device)

    @property
    def device(self) -> torch.device:
        return next(t for t in (self.layers[0].key, self.layers[0].recurrent) if t is not None).device

    @property
    def capacity(self) -> int:
        return next((s.key.shape[2] for s in self.layers if s.key is not None), 1 << 30)

    def row(self, i: int) -> CloverCache:
        """A one-sequence view; writes go through to this cache (lengths are copied back by the caller,
        positions are a view and follow)."""
        views = [LayerState(*(None if t is None else t[i : i + 1] for t in (s.key, s.value, s.recurrent, s.conv)))
                 for s in self.layers]
        return CloverCache(views, [self.lengths[i]], self.positions[i : i + 1])

    def select(self, rows: list[int]) -> CloverCache:
        """A compact copy holding only `rows` (finished sequences leave the batch)."""
        idx = torch.tensor(rows, device=self.device)
        layers = [LayerState(*(None if t is None else t.index_select(0, idx)
                               for t in (s.key, s.value, s.recurrent, s.conv))) for s in self.layers]
        return CloverCache(layers, [self.lengths[r] for r in rows], self.positions.index_select(0, idx))

    @staticmethod
    def join(caches: list[CloverCache]) -> CloverCache:
        """One cache holding the rows of `caches` in order (sequences join a running batch). Attention
        keys are padded to the largest capacity; past a row's length they are scratch anyway."""
        if len(caches) == 1:
            return caches[0]
        capacity = max(c.capacity for c in caches)

        def padded(t: torch.Tensor) -> torch.Tensor:
            if t.shape[2] == capacity:
                return t
            out = t.new_zeros(t.shape[0], t.shape[1], capacity, t.shape[3])
            out[:, :, : t.shape[2]] = t
            return out

        layers = []
        for states in zip(*(c.layers for c in caches), strict=True):
            if any(s.trial is not None for s in states):
                raise ValueError("a cache with an uncommitted trial forward cannot join another")
            key = None if states[0].key is None else torch.cat([padded(s.key) for s in states])
            value = None if states[0].value is None else torch.cat([padded(s.value) for s in states])
            recurrent = None if states[0].recurrent is None else torch.cat([s.recurrent for s in states])
            conv = None if states[0].conv is None else torch.cat([s.conv for s in states])
            layers.append(LayerState(key, value, recurrent, conv))
        return CloverCache(layers, [n for c in caches for n in c.lengths], torch.cat([c.positions for c in caches]))

    def rewind(self, tokens: int | list[int]) -> None:
        """Forget the last `tokens` committed tokens of every row (or `tokens[i]` of row i): benchmarks
        repeat one forward over the same history. The GDN state is not rewound."""
        per_row = [tokens] * len(self.lengths) if isinstance(tokens, int) else list(tokens)
        self.lengths[:] = [x - t for x, t in zip(self.lengths, per_row, strict=True)]
        self.positions.sub_(tokens if isinstance(tokens, int) else torch.tensor(per_row, device=self.positions.device))

"""Count what a piece of engine code asks of the device: operators (kernel launches) and host syncs.

`count()` works on any device, CPU included, so CI can hold the engine to "no host synchronisation
inside a forward": a dispatch mode sees every aten operator, and those that need a value on the host
(`nonzero`, boolean indexing, `unique`, a copy to the CPU, ...) are counted as syncs, as they would
block on a GPU. The Python conversions (`item`, `tolist`, `numpy`, `bool`, `int`, `float`, `index`) are
counted by a patch, since on CPU (and for inference tensors) they read memory without dispatching an
operator. Every dispatched operator is one kernel launch or
more on a GPU; on CUDA `cuda_kernels` counts the launched kernels themselves.
"""

from __future__ import annotations

import contextlib
from collections import Counter as Tally
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
# Operators whose output needs a value or a size known only on the device.
_SYNCING = {
    aten._local_scalar_dense.default, aten.nonzero.default, aten.masked_select.default, aten._unique2.default,
    aten.unique_consecutive.default, aten.unique_dim.default, aten.equal.default, aten.is_nonzero.default,
    aten.nonzero_static.default, aten.bincount.default, aten.histc.default,
}


@dataclass
class Counts:
    ops: int = 0
    syncs: int = 0
    where: Tally = field(default_factory=Tally)  # sync operator -> count
    converting: int = 0  # inside a patched conversion: its own operators are not counted again


class _Mode(TorchDispatchMode):
    def __init__(self, counts: Counts):
        super().__init__()
        self.counts = counts

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.counts.ops += 1
        if not self.counts.converting and _syncs(func, args, kwargs):
            self.counts.syncs += 1
            self.counts.where[str(func.overloadpacket.__name__)] += 1
        return func(*args, **kwargs)


def _syncs(func, args, kwargs) -> bool:
    if func in _SYNCING:
        return True
    packet = func.overloadpacket
    if packet in (aten.index, aten.index_put, aten.index_put_, aten._index_put_impl_):
        indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
        return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices or ())
    if packet is aten.repeat_interleave and isinstance(args[0], torch.Tensor) and len(args) > 0:
        return kwargs.get("output_size") is None and isinstance(args[1] if len(args) > 1 else None, torch.Tensor)
    if packet in (aten._to_copy, aten.copy_):  # device -> host copies block on the device
        src = args[1] if packet is aten.copy_ else args[0]
        dst = args[0].device if packet is aten.copy_ else kwargs.get("device") or src.device
        return src.device.type != "cpu" and torch.device(dst).type == "cpu"
    return False


@contextlib.contextmanager
def count():
    """`with count() as c:` c.ops operators dispatched, c.syncs host synchronisations (c.where: which)."""
    counts = Counts()
    names = ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__")
    originals = {name: getattr(torch.Tensor, name) for name in names}

    def patched(name):
        def call(self, *args, **kwargs):
            if not counts.converting:
                counts.syncs += 1
                counts.where[name.strip("_")] += 1
            counts.converting += 1
            try:
                return originals[name](self, *args, **kwargs)
            finally:
                counts.converting -= 1
        return call

    for name in originals:
        setattr(torch.Tensor, name, patched(name))
    try:
        with _Mode(counts):
            yield counts
    finally:
        for name, fn in originals.items():
            setattr(torch.Tensor, name, fn)


def cuda_kernels(fn) -> int:
    """CUDA kernels one call of `fn` launches (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)

"""Inference-only forms of the hot ops: the same functions in fewer, fused kernels.

Decoding runs a 1.3M-parameter model one block at a time, where each forward is a few hundred small
kernels and their launch cost outweighs the arithmetic. Without autograd these helpers replace
multi-kernel compositions (Qwen3.5's RMSNorm, the depthwise conv written as shifted multiply-adds, the
one-token gated delta rule) by fewer kernels computing the same values. With autograd enabled
(training) every caller keeps the original modules, so gradients are untouched.

Tensors derived from weights (the (1 + w) norm scale, the conv band matrices) are kept on the module
and rebuilt when a source weight changes, as `fused_linear` does for concatenated projections.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn


def derived(module: nn.Module, key, sources: tuple[torch.Tensor, ...], build: Callable[[], object]):
    """`build()` cached on `module` under `key` until a source tensor changes (optimizer step, `.to()`)."""
    tag = tuple((t.data_ptr(), t._version, t.dtype) for t in sources)
    store = module.__dict__.setdefault("_derived", {})
    hit = store.get(key)
    if hit is None or hit[0] != tag:
        hit = store[key] = (tag, build())
    return hit[1]


def norm(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Qwen3.5's zero-centred RMSNorm (scale 1 + w, computed in fp32); one kernel without autograd."""
    if torch.is_grad_enabled():
        return module(x)
    scale = derived(module, "scale", (module.weight,), lambda: 1.0 + module.weight.float())
    return F.rms_norm(x.float(), (x.shape[-1],), scale, module.eps).to(x.dtype)


def gated_norm(module: nn.Module, x: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    """Qwen3.5's gated RMSNorm: rms_norm(x) * w * silu(gate)."""
    if torch.is_grad_enabled():
        return module(x, gate)
    out = F.rms_norm(x.float(), (x.shape[-1],), module.weight.float(), module.variance_epsilon)
    return (out * F.silu(gate.float())).to(x.dtype)


def conv_band(left_taps: torch.Tensor, right_taps: torch.Tensor | None, t: int, block_size: int) -> torch.Tensor:
    """(C, T, W + T) matrices M with out[c] = M[c] @ [left context, block inputs][c].

    left_taps (C, W + 1): the causal depthwise kernel, oldest input first, the current token last.
    right_taps (C, W) or None: the right-context branch, r = 1..W positions later in the same block.
    """
    c, k = left_taps.shape
    width = k - 1
    band = left_taps.new_zeros(c, t, width + t)
    rows = torch.arange(t, device=left_taps.device)
    for tap in range(k):  # input i + tap of [left, pre] feeds output i
        band[:, rows, rows + tap] = left_taps[:, tap : tap + 1]
    if right_taps is not None:
        for r in range(1, width + 1):
            ok = rows[(rows % block_size) + r < block_size]
            band[:, ok, ok + width + r] = right_taps[:, r - 1 : r]
    return band


def conv(module, pre: torch.Tensor, left: torch.Tensor | None, block_size: int) -> torch.Tensor:
    """The GDN conv (causal taps over history + block, right taps inside the block), pre-activation.

    pre (N, C, T), left (N, C, W) -> (N, C, T): one batched matmul over channels. It pays for a
    single token; over a 32-token block the band is mostly zeros and the shifted multiply-adds of
    `CloverGatedDeltaNet.conv` are faster on CPU.
    """
    n, c, t = pre.shape

    def build():
        weight = module.conv1d.weight.squeeze(1).to(pre.dtype)  # (C, K)
        right = None if block_size == 1 else module.conv_right.to(pre.dtype)
        return conv_band(weight, right, t, block_size)

    band = derived(module, ("band", t, block_size), (module.conv1d.weight, module.conv_right), build)
    if left is None:
        left = pre.new_zeros(n, c, band.shape[-1] - t)
    full = torch.cat([left.to(pre.dtype), pre], -1)  # (N, C, W + T)
    if n == 1:
        return (band @ full[0, :, :, None]).squeeze(-1)[None]
    return (band @ full.permute(1, 2, 0)).permute(2, 0, 1)


def delta_token(q, k, v, g, beta, state):
    """One token of the gated delta rule against the state before it (the recurrent form).

    q, k (N, H, dk) unit vectors, q already scaled by dk^-0.5; v (N, H, dv); g, beta (N, H); state
    (N, H, dk, dv). Returns output (N, H, dv) and the new state.
    """
    decayed = state * g.exp()[..., None, None]
    v_new = (v - (k[..., None, :] @ decayed).squeeze(-2)) * beta[..., None]
    new = decayed + k[..., :, None] * v_new[..., None, :]
    return (q[..., None, :] @ new).squeeze(-2), new

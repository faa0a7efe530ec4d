"""Inference-only forms of the hot ops: the same functions in fewer, fused kernels.

Decoding runs a 1.3M-parameter model one block at a time, where each forward is a few hundred small
kernels and their launch cost outweighs the arithmetic. Without autograd these helpers replace
multi-kernel compositions (Qwen3.5's RMSNorm, the one-token depthwise conv written as shifted
multiply-adds, the one-token gated delta rule) by fewer kernels computing the same values. With autograd enabled
(training) every caller keeps the original modules, so gradients are untouched.

Tensors derived from weights (the (1 + w) norm scale, the conv taps, `fused_linear`'s concatenated
projections) are kept on the module by `derived` and rebuilt when a source weight changes.
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


def fused_linear(module: nn.Module, names: tuple[str, ...], x: torch.Tensor) -> torch.Tensor:
    """Several linears of `module` over the same input as one matmul (outputs concatenated).

    Without autograd the concatenated weight is kept (`derived`) and rebuilt only when a weight
    changes (an optimizer step bumps its version, `.to()` moves its storage).
    """
    linears = [getattr(module, name) for name in names]

    def concatenated():
        weights = [lin.weight for lin in linears]
        biases = [lin.bias for lin in linears]
        if all(b is None for b in biases):
            return torch.cat(weights), None
        return torch.cat(weights), torch.cat([b if b is not None else w.new_zeros(w.shape[0])
                                              for b, w in zip(biases, weights, strict=True)])

    if torch.is_grad_enabled():
        weight, bias = concatenated()
    else:
        weight, bias = derived(module, ("fused", names), tuple(lin.weight for lin in linears), concatenated)
    return F.linear(x, weight, bias)


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


def conv_token(module, pre: torch.Tensor, left: torch.Tensor | None) -> torch.Tensor:
    """The GDN conv for a one-token block (no right context), pre-activation.

    pre (N, C, 1), left (N, C, W) -> (N, C, 1): the causal taps as one batched matvec over channels,
    cheaper on CPU at one token than the shifted multiply-adds of `CloverGatedDeltaNet.conv`.
    """
    taps = derived(module, "taps", (module.conv1d.weight,), lambda: module.conv1d.weight.to(pre.dtype))  # (C, 1, K)
    if left is None:
        left = pre.new_zeros(pre.shape[0], pre.shape[1], taps.shape[-1] - 1)
    full = torch.cat([left.to(pre.dtype), pre], -1)  # (N, C, K)
    return (taps @ full.permute(1, 2, 0)).permute(2, 0, 1)


def delta_token(q, k, v, g, beta, state):
    """One token of the gated delta rule against the state before it (the recurrent form).

    q, k (N, H, dk) unit vectors, q already scaled by dk^-0.5; v (N, H, dv); g, beta (N, H); state
    (N, H, dk, dv). Returns output (N, H, dv) and the new state.
    """
    decayed = state * g.exp()[..., None, None]
    v_new = (v - (k[..., None, :] @ decayed).squeeze(-2)) * beta[..., None]
    new = decayed + k[..., :, None] * v_new[..., None, :]
    return (q[..., None, :] @ new).squeeze(-2), new

"""The sparse MoE feed-forward as a sorted-token dispatch: one grouped matmul per projection.

Qwen3.5-MoE's `Qwen3_5MoeExperts.forward` (the reference, which training keeps) loops over the experts
a batch hits, with a `nonzero`, a `torch.where` and an index test per expert: a host synchronisation
and a handful of kernels each, 8 to 256 times per layer. Here the (token, expert) assignments are
sorted by expert once and every expert's rows run in one `torch._grouped_mm` per projection, with the
group offsets computed on the device: no host synchronisation, a fixed number of kernels whatever the
routing. Where `_grouped_mm` cannot run (an older torch, or row strides it refuses) the same sorted
rows go through a loop over all experts with device-side offsets, still without synchronising.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .fast import fused_linear


def moe_forward(block: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Qwen3.5-MoE's sparse block (routed experts plus the gated shared expert) on x (N, T, D)."""
    n, t, d = x.shape
    flat = x.reshape(-1, d)
    _, weights, chosen = block.gate(flat)  # (M, k) routing weights and expert indices
    routed = grouped_experts(block.experts, flat, chosen, weights)
    shared = block.shared_expert
    gate, up = fused_linear(shared, ("gate_proj", "up_proj"), flat).chunk(2, -1)
    shared_out = shared.down_proj(shared.act_fn(gate) * up)
    return (routed + torch.sigmoid(block.shared_expert_gate(flat)) * shared_out).reshape(n, t, d)


def grouped_experts(experts: nn.Module, x: torch.Tensor, chosen: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Sum over each token's k experts of weight * expert(x): x (M, D), chosen and weights (M, k) -> (M, D).

    Same function as `Qwen3_5MoeExperts.forward`, contributions added per token in ascending expert
    order as there (a stable sort keeps a token's assignments in that order).
    """
    m, k = chosen.shape
    num = experts.gate_up_proj.shape[0]
    order = chosen.reshape(-1).argsort(stable=True)  # (M*k,) assignments sorted by expert
    experts_sorted = chosen.reshape(-1)[order]
    token = order // k
    rows = x.index_select(0, token)  # (M*k, D)
    # ends[e]: assignments to experts <= e; searchsorted keeps it on the device (bincount would sync on CUDA)
    ends = torch.searchsorted(experts_sorted, torch.arange(num, device=x.device, dtype=experts_sorted.dtype),
                              right=True)
    if _grouped_ok(rows, experts.gate_up_proj, experts.down_proj):
        offs = ends.to(torch.int32)
        gate, up = torch._grouped_mm(rows, experts.gate_up_proj.transpose(-1, -2), offs=offs).chunk(2, -1)
        out = torch._grouped_mm(experts.act_fn(gate) * up, experts.down_proj.transpose(-1, -2), offs=offs)
    else:
        out = _segment_loop(experts, rows, experts_sorted)
    out = out * weights.reshape(-1)[order, None].to(out.dtype)
    return torch.zeros_like(x).index_add_(0, token, out.to(x.dtype))


def _segment_loop(experts: nn.Module, rows: torch.Tensor, experts_sorted: torch.Tensor) -> torch.Tensor:
    """The fallback: every expert over all sorted rows, masked to its own (no data-dependent shapes).

    Only for shapes `_grouped_mm` refuses (tiny test sizes, old torch): its cost grows with the expert count.
    """
    out = rows.new_zeros(rows.shape[0], experts.down_proj.shape[1])
    for e in range(experts.gate_up_proj.shape[0]):
        gate, up = F.linear(rows, experts.gate_up_proj[e]).chunk(2, -1)
        y = F.linear(experts.act_fn(gate) * up, experts.down_proj[e])
        out = torch.where((experts_sorted == e)[:, None], y, out)
    return out


def _grouped_ok(rows: torch.Tensor, *weights: torch.Tensor) -> bool:
    """Whether `torch._grouped_mm` takes these operands: it needs 16-byte aligned row strides."""
    if not hasattr(torch, "_grouped_mm") or rows.dtype not in (torch.float32, torch.bfloat16):
        return False
    if rows.is_cuda and rows.dtype != torch.bfloat16:
        return False  # the CUDA kernel is bf16 only
    size = rows.element_size()
    return all(w.dtype == rows.dtype and w.shape[-1] * size % 16 == 0 and w.shape[-2] * size % 16 == 0
               for w in weights) and rows.shape[-1] * size % 16 == 0

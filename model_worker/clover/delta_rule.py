"""Gated delta rule over whole blocks, returning what Clover needs besides the output.

The algorithm is transformers' `torch_chunk_gated_delta_rule` (Qwen3.5) with the chunk set to the
block size. Unlike the Qwen function it also returns, for every block, the recurrent state at the
block start and the memory readout `m_i = S_startᵀ q_i`: Clover's joint softmax reads that slot, and
the training objective starts every noisy block from the clean state at its start.
"""

from __future__ import annotations

import functools

import torch
from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import (
    l2norm,
    torch_chunk_gated_delta_rule,
    torch_recurrent_gated_delta_rule,
)

__all__ = ["gated_delta_blocks", "torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule"]


@functools.cache
def _strict_upper(size: int, device: torch.device, inference: bool) -> torch.Tensor:
    # Keyed by inference mode: a tensor made under torch.inference_mode cannot enter autograd later.
    return torch.ones(size, size, dtype=torch.bool, device=device).triu(1)


def gated_delta_blocks(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    *,
    block_size: int,
    initial_state: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Causal gated delta rule over `T = nb * block_size` tokens, one chunk per block.

    query, key: (N, T, Hk, dk); value: (N, T, H, dv); g, beta: (N, T, H); initial_state: (N, H, dk, dv).
    Returns output (N, T, H, dv), memory readout (N, T, H, dv) and states (N, nb + 1, H, dk, dv): the
    state at every block start, then the final state. All in float32.
    """
    n, t, hk, dk = key.shape
    h, dv = value.shape[-2:]
    nb = t // block_size
    if nb * block_size != t:
        raise ValueError(f"{t} tokens are not a whole number of blocks of {block_size}")
    if hk != h:  # grouped value heads, as in Qwen3.5
        query = query.repeat_interleave(h // hk, dim=2)
        key = key.repeat_interleave(h // hk, dim=2)

    def blocks(x: torch.Tensor) -> torch.Tensor:  # (N, T, H, ...) -> (N, H, nb, B, ...)
        x = x.transpose(1, 2).float()
        return x.reshape(n, h, nb, block_size, *x.shape[3:])

    q = blocks(l2norm(query.float())) * dk**-0.5
    k = blocks(l2norm(key.float()))
    v = blocks(value)
    beta = blocks(beta)
    decay = blocks(g)
    k_beta = k * beta.unsqueeze(-1)
    v_beta = v * beta.unsqueeze(-1)

    cum = decay.cumsum(-1)  # (N, H, nb, B): log of the decay from the block start to each position
    pair = (cum.unsqueeze(-1) - cum.unsqueeze(-2)).masked_fill(_strict_upper(block_size, q.device, torch.is_inference_mode_enabled()), float("-inf")).exp()
    ut = (k_beta @ k.transpose(-1, -2)) * pair
    new_v = torch.linalg.solve_triangular(ut, v_beta, upper=False, unitriangular=True)
    k_cum = torch.linalg.solve_triangular(ut, k_beta * cum.exp().unsqueeze(-1), upper=False, unitriangular=True)
    intra = (q @ k.transpose(-1, -2)) * pair
    q_decayed = q * cum.exp().unsqueeze(-1)
    k_decayed = k * (cum[..., -1:] - cum).exp().unsqueeze(-1)
    block_decay = cum[..., -1].exp()[..., None, None]  # (N, H, nb, 1, 1)

    state = (
        torch.zeros(n, h, dk, dv, dtype=torch.float32, device=q.device)
        if initial_state is None
        else initial_state.float()
    )
    states = [state]
    outs, mems = [], []
    for i in range(nb):
        mems.append(q[:, :, i] @ state)
        v_new = new_v[:, :, i] - k_cum[:, :, i] @ state
        outs.append(q_decayed[:, :, i] @ state + intra[:, :, i] @ v_new)
        state = state * block_decay[:, :, i] + k_decayed[:, :, i].transpose(-1, -2) @ v_new
        states.append(state)

    out = torch.stack(outs, 2).reshape(n, h, t, dv).transpose(1, 2)
    mem = torch.stack(mems, 2).reshape(n, h, t, dv).transpose(1, 2)
    return out, mem, torch.stack(states, 1)

"""Gated delta rule over whole blocks, returning what Clover needs besides the output.

The algorithm is transformers' `torch_chunk_gated_delta_rule` (Qwen3.5) with the chunk set to the
block size. Unlike the Qwen function it also returns, for every block, the recurrent state at the
block start and the memory readout `m_i = S_startᵀ q_i`: Clover's joint softmax reads that slot, and
the training objective starts every noisy block from the clean state at its start.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import torch
from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import (
    l2norm,
    torch_chunk_gated_delta_rule,
    torch_recurrent_gated_delta_rule,
)

__all__ = ["BlockResult", "delta_blocks", "gated_delta_blocks", "torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule"]


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
    n, t = key.shape[:2]
    r = delta_blocks(query, key, value, g, beta, block_size=block_size, initial_state=initial_state)
    h, dv = value.shape[-2:]
    out, mem = (x.reshape(n, h, t, dv).transpose(1, 2) for x in (r.out, r.memory))
    return out, mem, r.states


class BlockResult(NamedTuple):
    """Block-major (N, H, nb, B, ...) float32 results, plus unit q/k for Clover's joint softmax."""

    out: torch.Tensor
    memory: torch.Tensor
    states: torch.Tensor  # (N, nb + 1, H, dk, dv)
    q_unit: torch.Tensor
    k_unit: torch.Tensor
    value: torch.Tensor


def delta_blocks(query, key, value, g, beta, *, block_size: int, initial_state=None) -> BlockResult:
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

    q_unit = blocks(l2norm(query.float()))
    k = blocks(l2norm(key.float()))
    q = q_unit * dk**-0.5
    v = blocks(value)
    beta = blocks(beta)
    cum = blocks(g).cumsum(-1)  # (N, H, nb, B): log of the decay from the block start to each position
    k_beta = k * beta.unsqueeze(-1)
    v_beta = v * beta.unsqueeze(-1)
    k_beta_decayed = k_beta * cum.exp().unsqueeze(-1)

    if block_size == 1:  # the UT system is the identity and there is nothing inside the block to mask
        new_v, k_cum = v_beta, k_beta_decayed
        intra = (q * k).sum(-1, keepdim=True)
    else:
        pair = (cum.unsqueeze(-1) - cum.unsqueeze(-2))
        pair = pair.masked_fill(_strict_upper(block_size, q.device, torch.is_inference_mode_enabled()),
                                float("-inf")).exp()
        ut = (k_beta @ k.transpose(-1, -2)) * pair
        # One triangular solve for both right-hand sides (Qwen3.5 makes two).
        solved = torch.linalg.solve_triangular(ut, torch.cat([v_beta, k_beta_decayed], -1), upper=False,
                                               unitriangular=True)
        new_v, k_cum = solved.split([dv, dk], -1)
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
    stack = (lambda xs: xs[0].unsqueeze(2)) if nb == 1 else (lambda xs: torch.stack(xs, 2))
    return BlockResult(stack(outs), stack(mems), torch.stack(states, 1), q_unit, k, v)

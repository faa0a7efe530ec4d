"""Gated delta rule over whole blocks, returning what Clover needs besides the output.

The algorithm is transformers' `torch_chunk_gated_delta_rule` (Qwen3.5), with chunks made of whole
blocks: at least 64 tokens, or the whole input when it is shorter. Unlike the Qwen function it also
returns:
- for every token i, the memory readout `m_i = S_bᵀ q_i`, where S_b is the state at the start of
  i's block (Clover's joint softmax reads that slot);
- optionally, the state at every block start (the training objective starts every noisy block from
  the clean state at its start).
Inside a chunk, the state at a block start b follows the same WY form as the chunk-end update:
S_b = exp(cum_{b-1}) S_c + Σ_{j<b} exp(cum_{b-1} - cum_j) k_j v_newⱼᵀ.
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

__all__ = [
    "BlockResult", "LazyStates", "causal_chunk", "delta_blocks", "gated_delta_blocks", "torch_chunk_gated_delta_rule",
    "torch_recurrent_gated_delta_rule",
]

MIN_CHUNK = 64


class LazyStates(NamedTuple):
    """The state after any number of tokens of a one-chunk pass, computed when asked (trial forwards
    need it at one point per sequence, decided after the forward)."""

    initial: torch.Tensor  # (N, H, dk, dv): the state before the pass
    cum: torch.Tensor  # (N, H, T): log decay from the pass start through each token
    key: torch.Tensor  # (N, H, T, dk): unit keys
    new_value: torch.Tensor  # (N, H, T, dv): the delta rule's corrected values

    def after(self, tokens: torch.Tensor | int) -> torch.Tensor:
        """(N, H, dk, dv): each sequence's state after its first `tokens[i]` tokens of the pass (`tokens`
        tokens for all when an int).

        S_n = exp(cum_{n-1}) S_0 + sum_{j < n} exp(cum_{n-1} - cum_j) k_j v_newⱼᵀ, the chunk-end update
        of `delta_blocks` stopped at n.
        """
        n, h, t = self.cum.shape
        if isinstance(tokens, int):  # the same count for every sequence: slices instead of gathers
            if tokens == 0:
                return self.initial.clone()
            c_last = self.cum[..., tokens - 1 : tokens]  # (N, H, 1)
            weights = (c_last - self.cum[..., :tokens]).exp()
            return (self.initial * c_last.exp()[..., None]
                    + (self.key[:, :, :tokens] * weights[..., None]).transpose(-1, -2) @ self.new_value[:, :, :tokens])
        last = (tokens - 1).clamp_min(0)[:, None, None].expand(n, h, 1)
        c_last = torch.where((tokens > 0)[:, None, None], self.cum.gather(2, last), 0.0)  # (N, H, 1)
        inside = torch.arange(t, device=self.cum.device)[None, None, :] < tokens[:, None, None]
        weights = (c_last - self.cum).masked_fill(~inside, float("-inf")).exp()
        return (self.initial * c_last.exp()[..., None]
                + (self.key * weights[..., None]).transpose(-1, -2) @ self.new_value)


class BlockResult(NamedTuple):
    """Block-major (N, H, nb, B, ...) float32 results, plus unit q/k for Clover's joint softmax."""

    out: torch.Tensor
    memory: torch.Tensor
    # (N, nb + 1, H, dk, dv): every block start, then the final state; LazyStates when asked for them
    states: torch.Tensor | LazyStates | None
    final: torch.Tensor  # (N, H, dk, dv)
    q_unit: torch.Tensor
    k_unit: torch.Tensor
    value: torch.Tensor


@functools.cache
def _masks(chunk: int, block_size: int, device: torch.device, inference: bool):
    """Index and mask tables of one chunk. Keyed by inference mode: a tensor made under
    torch.inference_mode cannot enter autograd later."""
    pos = torch.arange(chunk, device=device)
    start = pos // block_size * block_size  # the block start of every position
    after = pos[None, :] > pos[:, None]  # j > i: outside the causal window
    not_before_start = pos[None, :] >= start[:, None]  # j >= start(i): outside the memory window
    starts = torch.arange(0, chunk, block_size, device=device)
    not_before_block = pos[None, :] >= starts[:, None]  # (nbc, C)
    return (start - 1).clamp_min(0), start > 0, after, not_before_start, not_before_block


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
    """Causal gated delta rule over `T = nb * block_size` tokens.

    query, key: (N, T, Hk, dk); value: (N, T, H, dv); g, beta: (N, T, H); initial_state: (N, H, dk, dv).
    Returns output (N, T, H, dv), memory readout (N, T, H, dv) and states (N, nb + 1, H, dk, dv): the
    state at every block start, then the final state. All in float32.
    """
    n, t = key.shape[:2]
    r = delta_blocks(query, key, value, g, beta, block_size=block_size, initial_state=initial_state)
    h, dv = value.shape[-2:]
    out, mem = (x.reshape(n, h, t, dv).transpose(1, 2) for x in (r.out, r.memory))
    return out, mem, r.states


def delta_blocks(
    query, key, value, g, beta, *, block_size: int, initial_state=None, keep_states: bool = True,
    final: bool = True, lazy_states: bool = False, state_stride: int | None = None,
) -> BlockResult:
    """Without `final` (and without autograd) the result's final state may be None: a forward that
    commits nothing to the cache does not need it. With `lazy_states` (and `keep_states`) a pass of one
    chunk returns `LazyStates` instead of every block-start state. `state_stride` (a multiple of
    `block_size`) keeps the states only every that many tokens instead of at every block start: a
    causal (block size 1) pass gives the states a wider block would start from."""
    n, t, hk, dk = key.shape
    h, dv = value.shape[-2:]
    nb = t // block_size
    if nb * block_size != t:
        raise ValueError(f"{t} tokens are not a whole number of blocks of {block_size}")
    if hk != h:  # grouped value heads, as in Qwen3.5
        query = query.repeat_interleave(h // hk, dim=2)
        key = key.repeat_interleave(h // hk, dim=2)
    if nb == 1 and 1 < t <= MIN_CHUNK and not keep_states and not torch.is_grad_enabled():
        return one_block(query, key, value, g, beta, initial_state, final=final)
    stride = state_stride or block_size
    if stride % block_size:
        raise ValueError(f"state_stride {stride} is not a multiple of block size {block_size}")
    chunk = min(stride * -(-MIN_CHUNK // stride), -(-t // stride) * stride)
    pad = -t % chunk
    nc = (t + pad) // chunk
    lazy = keep_states and lazy_states and nc == 1 and not torch.is_grad_enabled()
    keep_states = keep_states and not lazy

    def chunks(x: torch.Tensor) -> torch.Tensor:  # (N, T, H, ...) -> (N, H, nc, C, ...), zero padded
        x = x.transpose(1, 2).float()
        if pad:  # padded tokens have beta = 0 and g = 0: they leave the state untouched
            x = torch.cat([x, x.new_zeros(*x.shape[:2], pad, *x.shape[3:])], 2)
        return x.reshape(n, h, nc, chunk, *x.shape[3:])

    q_unit = chunks(l2norm(query.float()))
    k = chunks(l2norm(key.float()))
    q = q_unit * dk**-0.5
    v = chunks(value)
    beta = chunks(beta)
    cum = chunks(g).cumsum(-1)  # (N, H, nc, C): log of the decay from the chunk start to each position
    prev, has_prev, after, mem_out, _ = _masks(chunk, block_size, q.device, torch.is_inference_mode_enabled())
    block_out = _masks(chunk, stride, q.device, torch.is_inference_mode_enabled())[4]
    cum_b = torch.where(has_prev, cum[..., prev], 0.0)  # log decay up to each position's block start
    k_beta = k * beta.unsqueeze(-1)
    v_beta = v * beta.unsqueeze(-1)
    k_beta_decayed = k_beta * cum.exp().unsqueeze(-1)

    if chunk == 1:  # one token (autoregressive step): the UT system is the identity, no earlier slot
        new_v, k_cum = v_beta, k_beta_decayed
        intra = (q * k).sum(-1, keepdim=True)
        intra_mem = torch.zeros_like(intra)
    else:
        diff = cum.unsqueeze(-1) - cum.unsqueeze(-2)
        pair = diff.masked_fill(after, float("-inf")).exp()
        ut = (k_beta @ k.transpose(-1, -2)) * pair
        # One triangular solve for both right-hand sides (Qwen3.5 makes two).
        solved = torch.linalg.solve_triangular(ut, torch.cat([v_beta, k_beta_decayed], -1), upper=False,
                                               unitriangular=True)
        new_v, k_cum = solved.split([dv, dk], -1)
        qk = q @ k.transpose(-1, -2)
        intra = qk * pair
        intra_mem = qk * (cum_b.unsqueeze(-1) - cum.unsqueeze(-2)).masked_fill(mem_out, float("-inf")).exp()
    q_decayed = q * cum.exp().unsqueeze(-1)
    q_mem = q * cum_b.exp().unsqueeze(-1)
    k_decayed = k * (cum[..., -1:] - cum).exp().unsqueeze(-1)
    chunk_decay = cum[..., -1].exp()[..., None, None]  # (N, H, nc, 1, 1)
    if keep_states:
        # log decay up to each kept state's position: cum_b at a stride start (a block start there)
        starts = cum_b[..., ::stride]  # (N, H, nc, nbc)
        weights = (starts.unsqueeze(-1) - cum.unsqueeze(-2)).masked_fill(block_out, float("-inf")).exp()
        k_weighted = (weights.unsqueeze(-1) * k.unsqueeze(3)).transpose(-1, -2)  # (N, H, nc, nbc, dk, C)

    state = (
        torch.zeros(n, h, dk, dv, dtype=torch.float32, device=q.device)
        if initial_state is None
        else initial_state.float()
    )
    initial = state
    # The loop over chunks is sequential, so each of its operators is a kernel launch per chunk on a GPU:
    # heads flattened into the batch of 3-D products, the two readouts of a chunk (output and memory)
    # stacked into one product, and each product fused with its sum (baddbmm): 5 launches a chunk, not 12.
    nh = n * h
    reads = torch.cat([q_decayed, q_mem], -2).reshape(nh, nc, 2 * chunk, dk)
    mixes = torch.cat([intra, intra_mem], -2).reshape(nh, nc, 2 * chunk, chunk)
    new_v_f, k_cum_f = new_v.reshape(nh, nc, chunk, dv), k_cum.reshape(nh, nc, chunk, dk)
    k_decayed_t = k_decayed.transpose(-1, -2).reshape(nh, nc, dk, chunk)
    decay_f = chunk_decay.reshape(nh, nc, 1, 1)
    state = state.reshape(nh, dk, dv)
    readouts, block_states = [], []
    for c in range(nc):
        v_new = torch.baddbmm(new_v_f[:, c], k_cum_f[:, c], state, alpha=-1)
        readouts.append(torch.baddbmm(torch.bmm(reads[:, c], state), mixes[:, c], v_new))
        if keep_states:
            block_states.append(starts[:, :, c, :, None, None].exp() * state.view(n, h, 1, dk, dv)
                                + k_weighted[:, :, c] @ v_new.view(n, h, 1, chunk, dv))
        state = torch.baddbmm(state * decay_f[:, c], k_decayed_t[:, c], v_new)
    v_new = v_new.view(n, h, chunk, dv)
    state = state.view(n, h, dk, dv)
    both = (readouts[0][:, None] if nc == 1 else torch.stack(readouts, 1)).view(n, h, nc, 2, chunk, dv)

    def blocks(x: torch.Tensor, width: int) -> torch.Tensor:  # (N, H, nc, C, width) -> (N, H, nb, B, width)
        return x.reshape(n, h, nc * chunk, width)[:, :, :t].reshape(n, h, nb, block_size, width)

    states = LazyStates(initial, cum[:, :, 0], k[:, :, 0], v_new) if lazy else None
    if keep_states:
        starts_all = block_states[0] if nc == 1 else torch.cat(block_states, 2)  # (N, H, nb', dk, dv)
        states = torch.cat([starts_all[:, :, : -(-t // stride)], state.unsqueeze(2)], 2).transpose(1, 2)
    flat = lambda x: x.reshape(n, h, nc * chunk, -1)[:, :, :t].reshape(n, h, nb, block_size, -1)  # noqa: E731
    return BlockResult(blocks(both[:, :, :, 0], dv), blocks(both[:, :, :, 1], dv), states, state, flat(q_unit),
                       flat(k), flat(v))


def _one_chunk(query, key, value, g, beta, initial_state):
    """What both one-chunk forms start with: unit queries and keys (N, H, T, dk), scaled queries,
    values, the cumulative log decay (N, H, T), the causal decay pairs exp(cum_i - cum_j) for j <= i,
    the `after` mask (j > i), the initial state and the delta rule's corrected values v_new."""
    n, t, h, dk = query.shape
    dv = value.shape[-1]
    q_unit = l2norm(query.float()).transpose(1, 2)  # (N, H, T, dk)
    k = l2norm(key.float()).transpose(1, 2)
    q = q_unit * dk**-0.5
    v = value.float().transpose(1, 2)
    beta = beta.float().transpose(1, 2)[..., None]  # (N, H, T, 1)
    cum = g.float().transpose(1, 2).cumsum(-1)  # (N, H, T)
    after = _masks(t, t, q.device, torch.is_inference_mode_enabled())[2]
    pair = (cum[..., :, None] - cum[..., None, :]).masked_fill(after, float("-inf")).exp()
    k_beta = k * beta
    solved = torch.linalg.solve_triangular((k_beta @ k.transpose(-1, -2)) * pair,
                                           torch.cat([v * beta, k_beta * cum.exp()[..., None]], -1),
                                           upper=False, unitriangular=True)
    state = (torch.zeros(n, h, dk, dv, dtype=torch.float32, device=q.device) if initial_state is None
             else initial_state.float())
    v_new = solved[..., :dv] - solved[..., dv:] @ state
    return q_unit, k, q, v, cum, pair, after, state, v_new


def one_block(query, key, value, g, beta, initial_state, *, final: bool) -> BlockResult:
    """`delta_blocks` for a single block of at most one chunk, without autograd: a denoising step.

    The block starts at the chunk start, so every memory readout is S_0ᵀ q_i and the intra-block
    memory terms vanish; the final state is computed only when asked for.
    """
    q_unit, k, q, v, cum, pair, _, state, v_new = _one_chunk(query, key, value, g, beta, initial_state)
    memory = q @ state
    out = (q * cum.exp()[..., None]) @ state + ((q @ k.transpose(-1, -2)) * pair) @ v_new
    end = None
    if final:
        last = cum[..., -1:]
        end = state * last.exp()[..., None] + (k * (last - cum).exp()[..., None]).transpose(-1, -2) @ v_new
    block = lambda x: x[:, :, None]  # noqa: E731  (N, H, 1, B, d)
    return BlockResult(block(out), block(memory), None, end, block(q_unit), block(k), block(v))


def causal_chunk(query, key, value, g, beta, initial_state) -> tuple:
    """`delta_blocks` at block size 1 over one chunk (at most `MIN_CHUNK` tokens), without autograd:
    the verifying forward of verified decoding.

    query, key (N, T, H, dk) with value heads already matched; value (N, T, H, dv); g, beta (N, T, H).
    Returns output and memory readout (N, H, T, dv) in float32, where the memory of token i reads the
    state before it, the `LazyStates` any prefix of the chunk would commit, and the unit queries, unit
    keys and values (N, H, T, ·) for the joint softmax.
    """
    q_unit, k, q, v, cum, pair, after, state, v_new = _one_chunk(query, key, value, g, beta, initial_state)
    qk = q @ k.transpose(-1, -2)
    out = (q * cum.exp()[..., None]) @ state + (qk * pair) @ v_new
    # Memory of token i: the state before it, exp(cum_{i-1}) S_0 + sum_{j<i} exp(cum_{i-1} - cum_j) k_j v_newⱼᵀ.
    before = torch.cat([cum.new_zeros(*cum.shape[:2], 1), cum[..., :-1]], -1)
    not_before = ~after.T  # j >= i: outside the state before token i
    pair_before = (before[..., :, None] - cum[..., None, :]).masked_fill(not_before, float("-inf")).exp()
    memory = (q * before.exp()[..., None]) @ state + (qk * pair_before) @ v_new
    return out, memory, LazyStates(state, cum, k, v_new), q_unit, k, v

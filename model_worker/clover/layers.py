"""Clover layers: Qwen3.5 Gated DeltaNet and gated attention, extended for block diffusion.

Parameter names are exactly Qwen3.5's so an autoregressive Qwen3.5(-MoE) state dict loads; every
Clover addition starts at zero (or is gated by a zero), so with block size 1 a freshly loaded model
computes the autoregressive model's function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention.bias import CausalBias
from transformers.activations import ACT2FN
from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import (
    Qwen3_5MoeMLP,
    Qwen3_5MoeRMSNorm,
    Qwen3_5MoeRMSNormGated,
    Qwen3_5MoeSparseMoeBlock,
    apply_rotary_pos_emb,
    l2norm,
)

from . import fast, kernels
from .configuration import CloverConfig
from .delta_rule import MIN_CHUNK, BlockResult, causal_chunk, delta_blocks
from .experts import moe_forward


@dataclass
class LayerState:
    """One layer's cache rows: attention keys/values, or the GDN recurrent and conv state."""

    key: torch.Tensor | None = None  # (N, Hkv, Tmax, d)
    value: torch.Tensor | None = None
    recurrent: torch.Tensor | None = None  # (N, H, dk, dv)
    conv: torch.Tensor | None = None  # (N, C, K - 1): pre-conv inputs of the last K - 1 committed tokens
    # After a trial pass (`Pass.trial`): GDN states at every block start of the pass (a tensor, or
    # LazyStates), and its pre-conv inputs, kept until the caller says how many blocks to commit.
    trial: tuple | None = None


@dataclass
class Pass:
    """What every layer of one forward needs: block size, rotary tables, mask, cache and commit count."""

    block_size: int
    cos: torch.Tensor  # (N, Q, rot)
    sin: torch.Tensor
    mask: torch.Tensor | CausalBias | None = None  # (N or 1, 1, Q, Tk) bool, True = may attend; or SDPA's causal bias
    lengths: torch.Tensor | None = None  # (N,) committed tokens per sequence
    offset: int | None = None  # the common committed length when all sequences share it
    key_len: int = 0  # keys to attend over in the cache (history + this pass)
    commit: int = 0  # leading blocks of this pass that become history
    trial: bool = False  # keep what any number of leading blocks would commit; decide after the pass


class CloverGatedDeltaNet(nn.Module):
    """Qwen3.5 GDN plus a joint softmax over [memory slot, block tokens] and a right-context conv."""

    def __init__(self, config: CloverConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.num_v_heads = config.linear_num_value_heads
        self.num_k_heads = config.linear_num_key_heads
        self.head_k_dim = config.linear_key_head_dim
        self.head_v_dim = config.linear_value_head_dim
        self.key_dim = self.head_k_dim * self.num_k_heads
        self.value_dim = self.head_v_dim * self.num_v_heads
        self.conv_kernel_size = config.linear_conv_kernel_dim
        self.conv_dim = self.key_dim * 2 + self.value_dim
        self.activation = config.hidden_act
        self.kernels = "auto"  # a long committed causal pass on fla where it runs (`kernels`; set_kernels)

        self.conv1d = nn.Conv1d(self.conv_dim, self.conv_dim, self.conv_kernel_size, bias=False,
                                groups=self.conv_dim, padding=self.conv_kernel_size - 1)
        self.dt_bias = nn.Parameter(torch.ones(self.num_v_heads))
        self.A_log = nn.Parameter(torch.log(torch.empty(self.num_v_heads).uniform_(0.01, 16)))
        self.norm = Qwen3_5MoeRMSNormGated(self.head_v_dim, eps=config.rms_norm_eps)
        self.out_proj = nn.Linear(self.value_dim, config.hidden_size, bias=False)
        self.in_proj_qkv = nn.Linear(config.hidden_size, self.conv_dim, bias=False)
        self.in_proj_z = nn.Linear(config.hidden_size, self.value_dim, bias=False)
        self.in_proj_b = nn.Linear(config.hidden_size, self.num_v_heads, bias=False)
        self.in_proj_a = nn.Linear(config.hidden_size, self.num_v_heads, bias=False)

        # Clover additions. The right-context taps are themselves the zero gate of that path: a separate
        # gate times zero-initialised taps would leave both with zero gradient and the path dead.
        self.conv_right = nn.Parameter(torch.zeros(self.conv_dim, self.conv_kernel_size - 1))
        self.joint_gate = nn.Parameter(torch.zeros(self.num_v_heads))
        self.joint_log_scale = nn.Parameter(torch.full((self.num_v_heads,), 0.5 * math.log(self.head_k_dim)))
        self.memory_bias = nn.Parameter(torch.zeros(self.num_v_heads))
        # lambda_h * log(B) on the memory logit: at 1 the memory slot weighs as much as the whole block
        # would under uniform attention, so its share does not shrink as the block grows.
        self.block_calibration = nn.Parameter(torch.ones(self.num_v_heads))

    def conv(self, pre: torch.Tensor, left: torch.Tensor | None, block_size: int,
             kernels: bool | None = None) -> torch.Tensor:
        """Causal conv with left context plus the in-block right branch, then SiLU. pre: (N, C, T).

        `kernels` (default: on CUDA) runs each branch as one depthwise conv1d instead of a multiply-add
        per tap; same function (tested equal), fewer kernels where launches dominate.
        """
        n, c, t = pre.shape
        width = self.conv_kernel_size - 1
        if left is None:
            left = pre.new_zeros(n, c, width)
        full = torch.cat([left.to(pre.dtype), pre], -1)
        # Later positions of the same block only: pad every block on its right, never read the next block.
        blocks = None if block_size == 1 else F.pad(pre.view(n, c, t // block_size, block_size), (0, width))
        if pre.is_cuda if kernels is None else kernels:
            out = F.conv1d(full, self.conv1d.weight.to(pre.dtype), groups=c)
            if blocks is not None:
                nb = t // block_size
                right = F.pad(self.conv_right.to(pre.dtype), (1, 0))[:, None]  # (C, 1, K): tap 0 is the token
                per_block = blocks.permute(0, 2, 1, 3).reshape(n * nb, c, block_size + width)
                out = out + F.conv1d(per_block, right, groups=c).view(n, nb, c, block_size).permute(0, 2, 1, 3
                                                                                                ).reshape(n, c, t)
            return ACT2FN[self.activation](out)
        # Qwen3.5's causal depthwise conv with its left padding replaced by the real history context,
        # written as shifted multiply-adds: on CPU a conv1d kernel over a few positions costs more in
        # setup than the arithmetic, and so does a reduction over a last dimension of 4.
        weight = self.conv1d.weight.squeeze(1).to(pre.dtype)[:, :, None]  # (C, K, 1)
        out = weight[:, width] * pre
        for tap in range(width):
            out = out + weight[:, tap] * full[..., tap : tap + t]
        if blocks is None:  # a one-token block has no later position to read
            return ACT2FN[self.activation](out)
        right = self.conv_right.to(pre.dtype)[:, :, None, None]  # (C, width, 1, 1)
        for r in range(1, width + 1):
            out = out + (right[:, r - 1] * blocks[..., r : r + block_size]).reshape(n, c, t)
        return ACT2FN[self.activation](out)

    def forward(
        self,
        x: torch.Tensor,
        *,
        block_size: int,
        state: torch.Tensor | None = None,
        left: torch.Tensor | None = None,
        keep_states: bool = False,
        final: bool = True,
        lazy_states: bool = False,
        state_stride: int | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, torch.Tensor]:
        """f(history, blocks): x (N, T, D) whole blocks after a history summarised by `state` and `left`.

        Returns output (N, T, D), the states at every block start and the end (N, nb + 1, H, dk, dv)
        if `keep_states`, the final state (may be None without `final`: nothing is committed), and the
        pre-conv inputs (N, C, T) that give conv context.
        """
        n, t, _ = x.shape
        names = ("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a")
        pre, z, b, a = fast.fused_linear(self, names, x).split(
            [self.conv_dim, self.value_dim, self.num_v_heads, self.num_v_heads], -1
        )
        pre = pre.transpose(1, 2)
        inference = not torch.is_grad_enabled()
        if inference and t == 1:  # one token: the taps as one small matmul
            mixed = ACT2FN[self.activation](fast.conv_token(self, pre, left)).transpose(1, 2)
        else:
            mixed = self.conv(pre, left, block_size).transpose(1, 2)
        query, key, value = torch.split(mixed, [self.key_dim, self.key_dim, self.value_dim], dim=-1)
        query = query.reshape(n, t, -1, self.head_k_dim)
        key = key.reshape(n, t, -1, self.head_k_dim)
        value = value.reshape(n, t, -1, self.head_v_dim)
        beta = b.sigmoid()
        rate = (-self.A_log.float().exp() if not inference
                else fast.derived(self, "rate", (self.A_log,), lambda: -self.A_log.float().exp()))
        g = rate * F.softplus(a.float() + self.dt_bias)

        if inference and t == 1 and not keep_states:
            out, final = self.one_token(query, key, value, g, beta, state)
            states = None
        elif inference and block_size == 1 and lazy_states and t <= MIN_CHUNK:
            out, states = self.causal_chunk(query, key, value, g, beta, state)
            final = None
        elif (inference and block_size == 1 and t > MIN_CHUNK and not keep_states and not lazy_states
              and kernels.wanted(self.kernels, x)):  # a prefill piece: the chunk loop as fla's kernels
            out, memory, final, q_unit, k_unit, v = kernels.causal_pass(query, key, value, g, beta, state)
            out = self.joint_one_token(out, memory, q_unit, k_unit, v).transpose(1, 2)
            states = None
        else:
            r = delta_blocks(query, key, value, g, beta, block_size=block_size, initial_state=state,
                             keep_states=keep_states, final=final, lazy_states=lazy_states,
                             state_stride=state_stride)
            out = r.out + self.joint_gate[:, None, None, None].float() * self.joint_softmax(r, block_size)
            out = out.reshape(n, self.num_v_heads, t, self.head_v_dim).transpose(1, 2)
            states, final = r.states, r.final

        out = fast.gated_norm(self.norm, out.to(x.dtype).reshape(-1, self.head_v_dim), z.reshape(-1, self.head_v_dim))
        return self.out_proj(out.reshape(n, t, -1)), states, final, pre

    def one_token(self, query, key, value, g, beta, state):
        """A one-token block (autoregressive step) without autograd: the recurrent delta rule, and the
        joint softmax over [memory slot, the token itself] as a two-way sigmoid. Output (N, 1, H, dv)."""
        h, dk = self.num_v_heads, self.head_k_dim
        q, k = l2norm(query[:, 0].float()), l2norm(key[:, 0].float())  # (N, Hk, dk)
        if q.shape[1] != h:
            q, k = q.repeat_interleave(h // q.shape[1], 1), k.repeat_interleave(h // k.shape[1], 1)
        v = value[:, 0].float()
        if state is None:
            state = q.new_zeros(q.shape[0], h, dk, v.shape[-1])
        state = state.float()
        scaled = q * dk**-0.5
        out, final = fast.delta_token(scaled, k, v, g[:, 0], beta[:, 0].float(), state)
        memory = (scaled[..., None, :] @ state).squeeze(-2)
        return self.joint_one_token(out, memory, q, k, v)[:, None], final

    def causal_chunk(self, query, key, value, g, beta, state):
        """Up to one chunk of one-token blocks without autograd (a verifying trial forward): the delta
        rule over the chunk, and each token's joint softmax over [memory slot, itself] as a two-way
        sigmoid, as in `one_token`. Output (N, T, H, dv) and the chunk's `LazyStates`."""
        h = self.num_v_heads
        if query.shape[2] != h:
            query, key = query.repeat_interleave(h // query.shape[2], 2), key.repeat_interleave(h // key.shape[2], 2)
        out, memory, states, q_unit, k_unit, v = causal_chunk(query, key, value, g, beta, state)
        return self.joint_one_token(out, memory, q_unit, k_unit, v).transpose(1, 2), states

    def joint_one_token(self, out, memory, q_unit, k_unit, v):
        """`out` plus the gated joint softmax of one-token blocks: over [memory slot, the token itself]
        it is a two-way sigmoid (block calibration * log(1) = 0). Tensors (N, H, ..., d), heads second."""
        per_head = (-1,) + (1,) * (q_unit.dim() - 3)  # (H, 1, ...) against (N, H, ...) without the last dim
        token_logit = (q_unit * k_unit).sum(-1) * self.joint_log_scale.float().exp().view(per_head)
        share = torch.sigmoid(token_logit - self.memory_bias.float().view(per_head))
        return out + self.joint_gate.float().view(per_head + (1,)) * (memory + share[..., None] * (v - memory))

    def joint_softmax(self, r: BlockResult, block_size: int) -> torch.Tensor:
        """One softmax per query over [memory slot m_i] + every token of its block (bidirectional)."""
        n, h, nb = r.q_unit.shape[:3]
        scale = self.joint_log_scale.float().exp()[:, None, None, None]
        token_logits = (r.q_unit @ r.k_unit.transpose(-1, -2)) * scale  # (N, H, nb, B, B)
        mem_logit = (self.memory_bias + self.block_calibration * math.log(block_size)).float()
        mem_logit = mem_logit[:, None, None, None].expand(n, h, nb, block_size, 1)
        weights = torch.cat([mem_logit, token_logits], -1).softmax(-1)
        return weights[..., :1] * r.memory + weights[..., 1:] @ r.value


class CloverAttention(nn.Module):
    """Qwen3.5 gated softmax attention; block-causal through the mask it is given."""

    def __init__(self, config: CloverConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.head_dim = config.head_dim
        self.num_heads = config.num_attention_heads
        self.num_kv_heads = config.num_key_value_heads
        self.scaling = self.head_dim**-0.5
        bias = config.attention_bias
        self.q_proj = nn.Linear(config.hidden_size, self.num_heads * self.head_dim * 2, bias=bias)
        self.k_proj = nn.Linear(config.hidden_size, self.num_kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(config.hidden_size, self.num_kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, config.hidden_size, bias=bias)
        self.q_norm = Qwen3_5MoeRMSNorm(self.head_dim, eps=config.rms_norm_eps)
        self.k_norm = Qwen3_5MoeRMSNorm(self.head_dim, eps=config.rms_norm_eps)

    def project(self, x, cos, sin):
        """x (N, Q, D) -> q (N, H, Q, d), k, v (N, Hkv, Q, d), output gate (N, Q, H*d)."""
        n, t, _ = x.shape
        kv_dim = self.num_kv_heads * self.head_dim
        q, k, v = fast.fused_linear(self, ("q_proj", "k_proj", "v_proj"), x).split(
            [self.num_heads * self.head_dim * 2, kv_dim, kv_dim], -1
        )
        q, gate = torch.chunk(q.reshape(n, t, -1, self.head_dim * 2), 2, dim=-1)
        gate = gate.reshape(n, t, -1)
        q = fast.norm(self.q_norm, q).transpose(1, 2)
        k = fast.norm(self.k_norm, k.reshape(n, t, -1, self.head_dim)).transpose(1, 2)
        v = v.reshape(n, t, -1, self.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        return q, k, v, gate

    def attend(self, q, k, v, gate, mask):
        n, _, t, _ = q.shape
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, scale=self.scaling, enable_gqa=self.num_heads != self.num_kv_heads
        )
        out = out.transpose(1, 2).reshape(n, t, -1) * torch.sigmoid(gate)
        return self.o_proj(out)


class CloverDecoderLayer(nn.Module):
    def __init__(self, config: CloverConfig, layer_idx: int):
        super().__init__()
        self.layer_type = config.layer_types[layer_idx]
        if self.layer_type == "linear_attention":
            self.linear_attn = CloverGatedDeltaNet(config, layer_idx)
        else:
            self.self_attn = CloverAttention(config, layer_idx)
        if config.num_experts > 0:
            self.mlp = Qwen3_5MoeSparseMoeBlock(config)
        else:
            self.mlp = Qwen3_5MoeMLP(config, intermediate_size=config.intermediate_size)
        self.input_layernorm = Qwen3_5MoeRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = Qwen3_5MoeRMSNorm(config.hidden_size, eps=config.rms_norm_eps)

    def feed_forward(self, h: torch.Tensor) -> torch.Tensor:
        x = fast.norm(self.post_attention_layernorm, h)
        if isinstance(self.mlp, Qwen3_5MoeMLP):  # Qwen3.5's dense MLP with gate and up in one matmul
            gate, up = fast.fused_linear(self.mlp, ("gate_proj", "up_proj"), x).chunk(2, -1)
            return h + self.mlp.down_proj(self.mlp.act_fn(gate) * up)
        if not torch.is_grad_enabled():  # sorted-token grouped experts; training keeps Qwen's expert loop
            return h + moe_forward(self.mlp, x)
        out = self.mlp(x)
        return h + (out[0] if isinstance(out, tuple) else out)

    def forward(self, h: torch.Tensor, p: Pass, cache: LayerState | None) -> torch.Tensor:
        """One layer over whole blocks against the cached history; folds `p.commit` blocks into it."""
        x = fast.norm(self.input_layernorm, h)
        if self.layer_type == "linear_attention":
            state = cache.recurrent if cache is not None else None
            left = cache.conv if cache is not None else None
            partial = cache is not None and (p.trial or 0 < p.commit < x.shape[1] // p.block_size)
            mixed, states, final, pre = self.linear_attn(x, block_size=p.block_size, state=state, left=left,
                                                         keep_states=partial, final=bool(p.commit),
                                                         lazy_states=p.trial)
            if p.trial and cache is not None:
                cache.trial = (states, pre)
            elif cache is not None and p.commit:
                cache.recurrent.copy_(states[:, p.commit] if partial else final)
                width = cache.conv.shape[-1]
                cache.conv.copy_(torch.cat([cache.conv, pre[..., : p.commit * p.block_size]], -1)[..., -width:])
        else:
            q, k, v, gate = self.self_attn.project(x, p.cos, p.sin)
            if cache is not None:
                write_keys(cache, k, v, p.lengths, p.offset)
                k, v = cache.key[:, :, : p.key_len], cache.value[:, :, : p.key_len]
            mixed = self.self_attn.attend(q, k, v, gate, p.mask)
        return self.feed_forward(h + mixed)

    def forward_pair(self, hc: torch.Tensor, hn: torch.Tensor, block_size: int, tables,
                     clean_block_size: int | None = None) -> tuple:
        """Training: clean stream f(clean, clean) and, from the same history, noisy blocks f(clean, noisy).

        The clean stream runs at `clean_block_size` (default `block_size`): at 1 it is the causal
        history that verified decoding drafts from (`tables` then carries a causal clean mask).
        """
        xc, xn = self.input_layernorm(hc), self.input_layernorm(hn)
        n, t, d = xc.shape
        nb = t // block_size
        if self.layer_type == "linear_attention":
            mc, states, _, pre = self.linear_attn(xc, block_size=clean_block_size or block_size, keep_states=True,
                                                  state_stride=block_size)
            width = self.linear_attn.conv_kernel_size - 1
            # Left conv context of block j: the clean pre-conv inputs of the `width` tokens before it.
            left = F.pad(pre, (width, 0)).unfold(-1, width, block_size)[:, :, :nb]  # (N, C, nb, width)
            left = left.permute(0, 2, 1, 3).reshape(n * nb, -1, width)
            mn = self.linear_attn(
                xn.reshape(n * nb, block_size, d),
                block_size=block_size,
                state=states[:, :nb].reshape(n * nb, *states.shape[2:]),
                left=left,
            )[0]
            mn = mn.reshape(n, t, d)
        else:
            cos, sin, clean_mask, noisy_mask = tables
            qc, kc, vc, gc = self.self_attn.project(xc, cos, sin)
            qn, kn, vn, gn = self.self_attn.project(xn, cos, sin)
            mc = self.self_attn.attend(qc, kc, vc, gc, clean_mask)
            mn = self.self_attn.attend(qn, torch.cat([kc, kn], 2), torch.cat([vc, vn], 2), gn, noisy_mask)
        return self.feed_forward(hc + mc), self.feed_forward(hn + mn)


def write_keys(cache: LayerState, k, v, lengths: torch.Tensor, offset: int | None) -> None:
    """Write this pass's keys at each sequence's own offset; slots past its length are scratch."""
    n, _, t, _ = k.shape
    if offset is not None:
        cache.key[:, :, offset : offset + t] = k
        cache.value[:, :, offset : offset + t] = v
        return
    rows = torch.arange(n, device=k.device)[:, None]
    cols = lengths[:, None] + torch.arange(t, device=k.device)[None, :]
    cache.key[rows, :, cols] = k.transpose(1, 2)
    cache.value[rows, :, cols] = v.transpose(1, 2)

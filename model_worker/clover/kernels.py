"""The gated delta rule of a long causal pass as flash-linear-attention's Triton kernels (the `gpu` extra).

A prefill piece (block size 1, committed, longer than one chunk) is the one GDN pass whose plain-torch
form loops: `delta_blocks` runs its 64-token chunks one after another, a few kernel launches each, 64
chunks for a 4,096-token prompt in every GDN layer. fla's chunked kernel computes the whole pass in a
handful of launches.

Clover needs one readout fla does not return: the memory of token i reads the state before it,
m_i = S_{i-1}ᵀ q_i. fla's output is o_i = S_iᵀ q_i; with the queries shifted one token left it is
o'_i = S_iᵀ q_{i+1} = m_{i+1}. A second call gives every memory readout but the first, which is the
initial state read by q_0.

`MODEL_KERNELS` (`EngineSettings.kernels`) chooses: `auto` (fla on CUDA where it is installed, else
plain torch), `torch` (always the reference), `fla` (required: a missing package stops start-up).
Both paths are tested equal (`tests/model_worker/test_fla_kernels.py`, the kernels run by Triton's
interpreter on a CPU).
"""

from __future__ import annotations

import functools
import importlib.util
import os

import torch
from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import l2norm

KERNELS = ("auto", "torch", "fla")
INSTALL = "pip install -e '.[gpu]' (flash-linear-attention and triton)"


@functools.cache
def fla_installed() -> bool:
    return importlib.util.find_spec("fla") is not None and importlib.util.find_spec("triton") is not None


def check(kernels: str, device: torch.device | str) -> None:
    """Refuse a kernel choice this process cannot run, with the reason (ValueError)."""
    if kernels not in KERNELS:
        raise ValueError(f"MODEL_KERNELS={kernels!r} is not one of {', '.join(KERNELS)}")
    if kernels != "fla":
        return
    if not fla_installed():
        raise ValueError(f"MODEL_KERNELS=fla needs the gpu extra: {INSTALL}; MODEL_KERNELS=torch runs without it")
    if torch.device(device).type != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        raise ValueError(f"MODEL_KERNELS=fla runs Triton kernels, which need a CUDA device (here: {device}); "
                         "on a CPU only Triton's interpreter runs them (TRITON_INTERPRET=1, for tests)")


def wanted(kernels: str, x: torch.Tensor) -> bool:
    """Whether a causal pass over `x` runs on fla under the choice `kernels`."""
    return kernels == "fla" or (kernels == "auto" and x.is_cuda and fla_installed())


def causal_pass(query, key, value, g, beta, state):
    """The committed causal (block size 1) delta rule over a whole pass, on fla's chunked kernel.

    query, key (N, T, Hk, dk); value (N, T, H, dv), H a multiple of Hk (fla groups value heads as
    `repeat_interleave` does); g, beta (N, T, H); state (N, H, dk, dv) or None.
    Returns, like `delta_rule.causal_chunk`: output and memory readout (N, H, T, dv) in float32, the
    final state (N, H, dk, dv), and the unit queries, unit keys and values (N, H, T, ·) for the joint
    softmax (keys and queries repeated to H heads there).
    """
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule

    n, t, hk, dk = key.shape
    h, dv = value.shape[-2:]
    q_unit, k_unit = l2norm(query.float()), l2norm(key.float())
    v, g, beta = value.float(), g.float(), beta.float()
    if state is None:
        state = torch.zeros(n, h, dk, dv, device=value.device)
    state = state.float()
    scale = dk**-0.5
    out, final = chunk_gated_delta_rule(q_unit, k_unit, v, g, beta, scale=scale, initial_state=state,
                                        output_final_state=True)
    shifted = torch.cat([q_unit[:, 1:], q_unit.new_zeros(n, 1, hk, dk)], 1)
    later, _ = chunk_gated_delta_rule(shifted, k_unit, v, g, beta, scale=scale, initial_state=state,
                                      output_final_state=False)
    heads = lambda x: x.repeat_interleave(h // hk, 2) if hk != h else x  # noqa: E731
    first = torch.einsum("nhk,nhkv->nhv", heads(q_unit)[:, 0] * scale, state)
    memory = torch.cat([first[:, None], later[:, :-1].float()], 1)
    per_head = lambda x: x.transpose(1, 2)  # noqa: E731  (N, T, H, d) -> (N, H, T, d)
    return (per_head(out.float()), per_head(memory), final, per_head(heads(q_unit)), per_head(heads(k_unit)),
            per_head(v))

"""Tiny seeded Clover models for engine tests."""

import torch

from model_worker.clover import CloverConfig, CloverForBlockDiffusion


def tiny_model(seed: int = 0, *, random_memory_bias: bool = True, **overrides) -> CloverForBlockDiffusion:
    """A tiny model whose Clover paths are switched on (random gates), so they are exercised."""
    torch.manual_seed(seed)
    model = CloverForBlockDiffusion(CloverConfig.preset("tiny", **{"initializer_range": 0.2, **overrides})).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            if layer.layer_type == "linear_attention":
                layer.linear_attn.joint_gate.normal_(0, 0.5)
                layer.linear_attn.conv_right.normal_(0, 0.3)
                if random_memory_bias:
                    layer.linear_attn.memory_bias.normal_(0, 0.5)
    return model

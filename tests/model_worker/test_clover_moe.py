"""The mixture-of-experts feed-forward: a fresh model spreads tokens over its experts."""

import torch

from model_worker.clover import CloverConfig, CloverForBlockDiffusion

MOE = dict(num_experts=16, num_experts_per_tok=4, moe_intermediate_size=16, shared_expert_intermediate_size=16)


def test_a_fresh_mixture_of_experts_model_routes_tokens_to_many_experts():
    torch.manual_seed(0)
    model = CloverForBlockDiffusion(CloverConfig.preset("tiny", **MOE)).eval()
    x = torch.randn(64, model.config.hidden_size)
    for layer in model.model.layers:
        assert layer.mlp.gate.weight.abs().max() > 0
        _, _, chosen = layer.mlp.gate(x)
        assert chosen.unique().numel() >= 12  # of 16; an all-zero router always picks experts 0..3

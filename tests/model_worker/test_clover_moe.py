"""The mixture-of-experts feed-forward: a fresh model spreads tokens over its experts."""

import pytest
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


@pytest.mark.parametrize("grouped_mm", [True, False])
def test_grouped_experts_compute_the_reference_expert_loop(grouped_mm, monkeypatch):
    from model_worker.clover import experts

    if not grouped_mm:  # the fallback for torch builds or shapes `_grouped_mm` refuses
        monkeypatch.setattr(experts, "_grouped_ok", lambda *a: False)
    torch.manual_seed(0)
    model = CloverForBlockDiffusion(CloverConfig.preset("tiny", **MOE)).eval()
    block = model.model.layers[0].mlp
    x = torch.randn(2, 24, model.config.hidden_size)
    with torch.no_grad():
        assert torch.allclose(experts.moe_forward(block, x), block(x), atol=1e-6)


def test_a_mixture_of_experts_model_decodes_the_same_tokens_with_grouped_experts(monkeypatch):
    from model_worker.clover import experts
    from model_worker.sampler import preset
    from model_worker.sampler.decodings import generate

    torch.manual_seed(0)
    model = CloverForBlockDiffusion(CloverConfig.preset("tiny", **MOE, trained_block_sizes=[1, 8])).eval()
    cfg = preset("verified", block_size=8, max_new_tokens=24)
    grouped = generate(model, [[5, 6, 7, 9, 11]], cfg)[0].tokens
    monkeypatch.setattr(experts, "grouped_experts", lambda e, x, c, w: e(x, c, w))  # Qwen's loop
    assert generate(model, [[5, 6, 7, 9, 11]], cfg)[0].tokens == grouped

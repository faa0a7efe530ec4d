"""A tiny seeded Clover model trains a step, saves, reloads through the Auto classes and decodes."""

import torch
from transformers import AutoConfig, AutoModelForCausalLM

from model_worker.clover import CloverConfig, CloverForBlockDiffusion
from model_worker.lab.objective import block_diffusion_loss
from model_worker.sampler import SamplerConfig, generate


def test_a_tiny_model_saves_reloads_with_auto_classes_and_decodes_the_same(tmp_path):
    torch.manual_seed(0)
    model = CloverForBlockDiffusion(CloverConfig.preset("tiny"))
    ids = torch.randint(4, 64, (2, 24))
    loss = block_diffusion_loss(model, ids, block_size=4, maskable=torch.ones_like(ids, dtype=torch.bool))
    loss.backward()
    assert torch.isfinite(loss)

    model.eval().save_pretrained(tmp_path)
    assert AutoConfig.from_pretrained(tmp_path).model_type == "clover"
    again = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    assert isinstance(again, CloverForBlockDiffusion)

    cfg = SamplerConfig(block_size=4, max_new_tokens=12, threshold=0.5)
    first = generate(model, [[5, 6, 7]], cfg)[0]
    second = generate(again, [[5, 6, 7]], cfg)[0]
    assert first.tokens == second.tokens
    assert 0 < len(first.tokens) <= 12


def test_the_mixture_of_experts_option_trains_and_decodes_blocks():
    torch.manual_seed(0)
    model = CloverForBlockDiffusion(CloverConfig.preset("tiny", num_experts=4, num_experts_per_tok=2,
                                                        moe_intermediate_size=16,
                                                        shared_expert_intermediate_size=16))
    assert hasattr(model.model.layers[0].mlp, "experts")
    ids = torch.randint(4, 64, (2, 16))
    block_diffusion_loss(model, ids, block_size=4, maskable=torch.ones_like(ids, dtype=torch.bool)).backward()
    out = generate(model.eval(), [[5, 6, 7]], SamplerConfig(block_size=4, max_new_tokens=9))[0]
    assert 0 < len(out.tokens) <= 9 and 3 not in out.tokens

"""Autoregressive Qwen3.5(-MoE) checkpoints load into Clover and, at block size 1, decode as before."""

import pytest
import torch
from transformers import (
    Qwen3_5ForCausalLM,
    Qwen3_5MoeForCausalLM,
    Qwen3_5MoeTextConfig,
    Qwen3_5TextConfig,
)

from model_worker.clover import CloverForBlockDiffusion
from model_worker.sampler import SamplerConfig, generate

SHAPE = dict(
    vocab_size=64, hidden_size=32, num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1,
    head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
    linear_value_head_dim=8, max_position_embeddings=256, eos_token_id=2, pad_token_id=0,
)


def tiny_qwen(kind: str):
    torch.manual_seed(0)
    if kind == "moe":
        config = Qwen3_5MoeTextConfig(**SHAPE, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                      shared_expert_intermediate_size=16)
        return Qwen3_5MoeForCausalLM(config).eval()
    return Qwen3_5ForCausalLM(Qwen3_5TextConfig(**SHAPE, intermediate_size=48)).eval()


@pytest.fixture(params=["moe", "dense"])
def pair(request, tmp_path):
    qwen = tiny_qwen(request.param)
    qwen.save_pretrained(tmp_path)
    clover = CloverForBlockDiffusion.from_pretrained(tmp_path, mask_token_id=3, trained_block_sizes=[1, 4]).eval()
    return qwen, clover


def test_a_qwen_checkpoint_loads_with_only_the_clover_additions_at_their_neutral_start(pair):
    qwen, clover = pair
    assert clover.config.model_type == "clover"
    qwen_state = qwen.state_dict()
    for name, tensor in clover.state_dict().items():
        if name in qwen_state:
            assert torch.equal(tensor, qwen_state[name]), name
    gdn = clover.model.layers[0].linear_attn
    assert torch.count_nonzero(gdn.joint_gate) == 0
    assert torch.count_nonzero(gdn.conv_right) == 0


def test_at_block_size_one_clover_logits_equal_the_autoregressive_model(pair):
    qwen, clover = pair
    ids = torch.randint(0, 64, (2, 37), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = qwen(ids).logits
        got = clover(ids, block_size=1).logits
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_block_size_one_greedy_decoding_matches_the_autoregressive_models_generate(pair):
    qwen, clover = pair
    prompt = [5, 9, 17, 33, 4, 21]
    with torch.no_grad():
        reference = qwen.generate(torch.tensor([prompt]), max_new_tokens=24, do_sample=False,
                                  eos_token_id=None, pad_token_id=0)[0, len(prompt):].tolist()
    out = generate(clover, [prompt], SamplerConfig(block_size=1, max_new_tokens=24))[0]
    expected = reference[: reference.index(2)] if 2 in reference else reference
    assert out.tokens == expected
    assert out.stats.tokens_per_forward == 1.0

"""The device paths of the engine compute the plain-torch reference (checked on CPU at tiny shapes)."""

import pytest
import torch

from model_worker.clover import CloverConfig, CloverForBlockDiffusion


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = CloverForBlockDiffusion(CloverConfig.preset("tiny", trained_block_sizes=[1, 4, 8])).eval()
    with torch.no_grad():
        for layer in m.model.layers:  # the Clover additions away from their neutral zeros
            if layer.layer_type == "linear_attention":
                layer.linear_attn.conv_right.normal_(0, 0.3)
                layer.linear_attn.joint_gate.fill_(0.5)
    return m


@pytest.mark.parametrize("block_size", [1, 4])
def test_the_conv1d_kernels_compute_the_tap_by_tap_conv(model, block_size):
    gdn = model.model.layers[0].linear_attn
    pre, left = torch.randn(2, gdn.conv_dim, 16), torch.randn(2, gdn.conv_dim, gdn.conv_kernel_size - 1)
    with torch.no_grad():
        want = gdn.conv(pre, left, block_size, kernels=False)
        assert torch.allclose(gdn.conv(pre, left, block_size, kernels=True), want, atol=1e-6)


def test_a_prompt_prefilled_in_64_token_chunks_leaves_the_state_of_token_by_token_decoding(model):
    ids = torch.randint(4, 64, (1, 150))
    with torch.inference_mode():
        chunked, stepped = model.new_cache(1, 160), model.new_cache(1, 160)
        last = model.prefill(ids, chunked, block_size=1)
        for i in range(ids.shape[1]):
            one = model.decode(ids[:, i : i + 1], stepped, block_size=1, commit=1)[:, -1]
    assert chunked.lengths == stepped.lengths == [150]
    assert torch.equal(chunked.positions, stepped.positions)
    assert torch.allclose(last, one, atol=1e-4)
    for a, b in zip(chunked.layers, stepped.layers, strict=True):
        for x, y in ((a.recurrent, b.recurrent), (a.conv, b.conv), (a.key, b.key), (a.value, b.value)):
            if x is not None:
                assert torch.allclose(x, y, atol=1e-4)

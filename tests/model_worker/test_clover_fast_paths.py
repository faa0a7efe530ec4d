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

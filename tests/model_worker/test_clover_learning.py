"""Trained with the block-diffusion loss, a tiny model decodes what it learned, several tokens a forward."""

import torch

from model_worker.clover import CloverConfig, CloverForBlockDiffusion
from model_worker.lab.objective import block_diffusion_loss
from model_worker.sampler import SamplerConfig, generate

CYCLE = list(range(4, 20))


def test_a_tiny_model_learns_a_cycle_and_decodes_it_in_parallel_at_every_trained_block_size():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        model = CloverForBlockDiffusion(CloverConfig.preset("tiny"))
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        g = torch.Generator().manual_seed(0)
        for step in range(180):
            starts = torch.randint(0, len(CYCLE), (8,), generator=g).tolist()
            ids = torch.tensor([[CYCLE[(s + i) % len(CYCLE)] for i in range(32)] for s in starts])
            loss = block_diffusion_loss(model, ids, block_size=[1, 4, 8][step % 3],
                                        maskable=torch.ones_like(ids, dtype=torch.bool), generator=g)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        expected = [CYCLE[(8 + i) % len(CYCLE)] for i in range(24)]  # continues 7, 8, 9, 10, 11
        tpf = {}
        for bs in (1, 4, 8):
            out = generate(model, [[7, 8, 9, 10, 11]], SamplerConfig(block_size=bs, threshold=0.9, max_new_tokens=24))[0]
            assert out.tokens == expected, bs
            tpf[bs] = out.stats.tokens_per_forward
        assert tpf[1] == 1.0
        assert tpf[4] > 2.0 and tpf[8] > tpf[4]
    finally:
        torch.set_num_threads(old)

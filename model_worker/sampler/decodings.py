"""The decodings, each an algorithm with its own loop and its named settings, chosen at the top.

`diffusion` denoises 32-token blocks and commits what the threshold rule is sure of, growing each
block left to right (`loop.generate_blocks`). `verified` (the product's default) drafts 32-token
blocks by block diffusion and keeps what block size 1 confirms: the `ar` text in far fewer forwards
(`verified.generate_verified`). `ar` is the same checkpoint at block size 1, one token per forward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .config import DECODINGS, SamplerConfig
from .loop import BlockCallback, StepCallback, check_prompts, generate_blocks
from .stats import GenerationOutput
from .verified import generate_verified

__all__ = ["DECODINGS", "PRESETS", "check_trained", "generate", "preset"]

PRESETS: dict[str, SamplerConfig] = {
    "diffusion": SamplerConfig(decoding="diffusion", block_size=32, rule="threshold", threshold=0.96,
                               fallback="prefix"),
    "verified": SamplerConfig(decoding="verified", block_size=32),
    "ar": SamplerConfig(decoding="ar", block_size=1, rule="threshold", threshold=0.9),
}
assert tuple(PRESETS) == DECODINGS, "every decoding has its preset"

_LOOPS = {"diffusion": generate_blocks, "ar": generate_blocks, "verified": generate_verified}


def preset(decoding: str, **overrides) -> SamplerConfig:
    """The named settings of `decoding`, with `overrides` (SamplerConfig fields) on top."""
    if decoding not in PRESETS:
        raise ValueError(f"unknown decoding {decoding!r}; choose one of {', '.join(DECODINGS)}")
    return replace(PRESETS[decoding], **overrides)


def check_trained(cfg: SamplerConfig, trained_block_sizes) -> None:
    """Refuse a decoding that needs a block size the checkpoint was not trained for, naming it."""
    trained = list(trained_block_sizes)
    for size in cfg.block_sizes_needed():
        if size not in trained:
            why = " (verified decoding checks its drafts at block size 1)" if size != cfg.block_size else ""
            raise ValueError(f"block size {size} was not trained for this checkpoint{why}; "
                             f"trained block sizes: {trained}")


def generate(
    model,
    prompts: list[list[int]],
    cfg: SamplerConfig,
    on_step: StepCallback | None = None,
    on_block: BlockCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[GenerationOutput]:
    """Continue every prompt with `cfg.decoding`; callbacks see drafts and finished blocks (generated part).

    on_step(seq, block, tokens, masked) after every step that changes a sequence's draft; on_block(seq,
    block, tokens) when a block (a round, for verified decoding) is finished, EOS trimmed. `block`
    counts this call's blocks from 0.
    """
    check_trained(cfg, model.config.trained_block_sizes)
    check_prompts(model, prompts)
    return _LOOPS[cfg.decoding](model, prompts, cfg, on_step, on_block, should_stop)

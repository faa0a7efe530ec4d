"""Sampler settings: one frozen, validated dataclass."""

from __future__ import annotations

from dataclasses import dataclass

DECODINGS = ("diffusion", "verified", "ar")  # the algorithms; their presets live in decodings.py
RULES = ("threshold", "factor", "entropy", "topk")
FALLBACKS = ("confident", "leftmost", "prefix")


@dataclass(frozen=True)
class SamplerConfig:
    """How a page is decoded: the decoding, its block size, its commit rule and knob, sampling and limits.

    decoding: "diffusion" denoises each block from all-mask, committing what the commit rule picks
    each step (`loop.py`); "ar" is the same loop at block size 1, one token per forward, where every
    rule commits the block's single slot; "verified" drafts a block in one forward and keeps the run
    of drafts that block size 1 (the autoregressive model) confirms in a second, plus the token after
    it (`verified.py`): the text of autoregressive decoding at up to B tokens per two forwards. The
    commit rule and fallback are diffusion's; the other decodings never read them.

    graphs (verified decoding only): the round's draft and verify forwards run as captured CUDA graphs
    (`model_worker.clover.graphs`), recorded again whenever the batch's rows change; off CUDA their
    static forms run eagerly, the same text.

    rule: "threshold" commits every masked position whose probability is >= `threshold` (always the
    most confident one); "factor" is Fast-dLLM's rule: the largest n with (n + 1)(1 - c_n) < `factor`
    over confidences sorted high to low; "entropy" commits the lowest-entropy positions while their
    entropy sum minus the largest stays <= `entropy_bound` (DiffusionGemma); "topk" commits `k` per step.

    fallback: what guarantees progress. "confident" (the rules as published) commits at least the most
    confident masked position; "leftmost" also commits the leftmost masked position every step, so a
    block never advances slower than autoregressive decoding and never fills its far end first;
    "prefix" commits the leftmost masked position and, only if the rule picks it, the unbroken run of
    picks that follows it, so a block grows left to right and a confident guess far ahead of the
    committed text never lands.
    """

    decoding: str = "diffusion"
    block_size: int = 32
    rule: str = "threshold"
    threshold: float = 0.9
    factor: float = 1.0
    entropy_bound: float = 0.3
    k: int = 4
    fallback: str = "confident"
    temperature: float = 0.0
    max_new_tokens: int = 4096
    seed: int = 0
    graphs: bool = False

    def __post_init__(self):
        if self.decoding not in DECODINGS:
            raise ValueError(f"unknown decoding {self.decoding!r}; valid decodings: {', '.join(DECODINGS)}")
        if self.rule not in RULES:
            raise ValueError(f"unknown commit rule {self.rule!r}; valid rules: {', '.join(RULES)}")
        if self.fallback not in FALLBACKS:
            raise ValueError(f"unknown fallback {self.fallback!r}; valid fallbacks: {', '.join(FALLBACKS)}")
        checks = [
            (self.block_size >= 1, f"block_size must be >= 1, got {self.block_size}"),
            (self.decoding != "ar" or self.block_size == 1,
             f"ar decoding writes one token per block: block_size must be 1, got {self.block_size}"),
            (self.decoding != "verified" or self.block_size >= 2,
             f"verified decoding drafts blocks of at least 2 tokens, got block size {self.block_size}"),
            (0.0 <= self.threshold <= 1.0, f"threshold must be in [0, 1], got {self.threshold}"),
            (self.factor > 0, f"factor must be > 0, got {self.factor}"),
            (self.entropy_bound >= 0, f"entropy_bound must be >= 0, got {self.entropy_bound}"),
            (self.k >= 1, f"k must be >= 1, got {self.k}"),
            (self.temperature >= 0, f"temperature must be >= 0, got {self.temperature}"),
            (self.max_new_tokens >= 1, f"max_new_tokens must be >= 1, got {self.max_new_tokens}"),
            (not self.graphs or self.decoding == "verified",
             f"graphs capture verified decoding's forwards, not {self.decoding!r}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)

    def block_sizes_needed(self) -> tuple[int, ...]:
        """The block sizes the checkpoint must have been trained for to run this decoding."""
        return (1, self.block_size) if self.decoding == "verified" else (self.block_size,)

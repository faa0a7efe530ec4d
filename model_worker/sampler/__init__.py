"""Block-diffusion sampler for Clover: the decodings, their commit rules and their figures.

The decoding loops (and torch) load on first use, so reading the names of the decodings
(`model_worker.sampler.config.DECODINGS`) stays light enough for the web tier.
"""

from .config import DECODINGS, RULES, SamplerConfig
from .stats import GenerationOutput, GenerationStats

__all__ = ["DECODINGS", "PRESETS", "RULES", "GenerationOutput", "GenerationStats", "SamplerConfig",
           "check_trained", "generate", "preset"]


def __getattr__(name: str):
    if name in ("PRESETS", "check_trained", "generate", "preset"):
        from . import decodings

        return getattr(decodings, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

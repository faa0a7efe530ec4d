"""Block-diffusion sampler for Clover: the decodings, their commit rules and their figures."""

from .config import DECODINGS, RULES, SamplerConfig
from .decodings import PRESETS, check_trained, generate, preset
from .stats import GenerationOutput, GenerationStats

__all__ = ["DECODINGS", "PRESETS", "RULES", "GenerationOutput", "GenerationStats", "SamplerConfig",
           "check_trained", "generate", "preset"]

"""Block-diffusion sampler for Clover: commit rules, the decoding loop and its figures."""

from .config import RULES, SamplerConfig
from .loop import generate
from .stats import GenerationOutput, GenerationStats

__all__ = ["RULES", "GenerationOutput", "GenerationStats", "SamplerConfig", "generate"]

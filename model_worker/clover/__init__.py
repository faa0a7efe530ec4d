"""Clover block-diffusion model, registered with the transformers Auto classes."""

from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

from .configuration import PRESETS, CloverConfig
from .modeling import CheckpointError, CloverCache, CloverForBlockDiffusion, CloverModel

AutoConfig.register(CloverConfig.model_type, CloverConfig, exist_ok=True)
AutoModel.register(CloverConfig, CloverModel, exist_ok=True)
AutoModelForCausalLM.register(CloverConfig, CloverForBlockDiffusion, exist_ok=True)

__all__ = ["PRESETS", "CheckpointError", "CloverCache", "CloverConfig", "CloverForBlockDiffusion", "CloverModel"]

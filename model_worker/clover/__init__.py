"""Clover block-diffusion model, registered with the transformers Auto classes."""

from transformers import AutoConfig, AutoModel, AutoModelForCausalLM
from transformers.conversion_mapping import (
    get_checkpoint_conversion_mapping,
    register_checkpoint_conversion_mapping,
)

from .cache import CloverCache
from .configuration import PRESETS, CloverConfig
from .modeling import CheckpointError, CloverForBlockDiffusion, CloverModel

AutoConfig.register(CloverConfig.model_type, CloverConfig, exist_ok=True)
AutoModel.register(CloverConfig, CloverModel, exist_ok=True)
AutoModelForCausalLM.register(CloverConfig, CloverForBlockDiffusion, exist_ok=True)
# Qwen3.5(-MoE) checkpoints store experts one by one and the multimodal text tower under
# `language_model`; the same key conversions as Qwen3.5-MoE let them load into Clover.
for _name in (CloverConfig.model_type, CloverForBlockDiffusion.__name__, CloverModel.__name__):
    register_checkpoint_conversion_mapping(
        _name, get_checkpoint_conversion_mapping("qwen3_5_moe_text"), overwrite=True
    )

__all__ = ["PRESETS", "CheckpointError", "CloverCache", "CloverConfig", "CloverForBlockDiffusion", "CloverModel"]

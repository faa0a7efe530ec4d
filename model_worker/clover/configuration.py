"""Configuration of the Clover block-diffusion model (a Qwen3.5 hybrid with Clover's block additions)."""

from __future__ import annotations

from huggingface_hub.dataclasses import strict
from transformers import PreTrainedConfig
from transformers.modeling_rope_utils import RopeParameters

# Named sizes. `tiny` is for seeded CPU tests; `demo` (5.9M parameters with a 6k vocabulary) is where the
# library checkpoint's training starts (the shipped one narrows it to 1.3M: docs/model.md, Demo preset):
# every 4th layer softmax attention, the rest Gated DeltaNet, as in Qwen3.5.
PRESETS: dict[str, dict] = {
    "tiny": dict(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
        num_attention_heads=2, num_key_value_heads=1, head_dim=16,
        linear_num_key_heads=2, linear_num_value_heads=2, linear_key_head_dim=8, linear_value_head_dim=8,
        max_position_embeddings=512, mask_token_id=3, eos_token_id=2, pad_token_id=0,
        trained_block_sizes=[1, 4, 8],
    ),
    "demo": dict(
        vocab_size=6144, hidden_size=256, intermediate_size=512, num_hidden_layers=6,
        num_attention_heads=4, num_key_value_heads=2, head_dim=64,
        linear_num_key_heads=4, linear_num_value_heads=4, linear_key_head_dim=64, linear_value_head_dim=64,
        max_position_embeddings=4096, tie_word_embeddings=True,
        trained_block_sizes=[1, 4, 8, 16, 32],
    ),
}


@strict
class CloverConfig(PreTrainedConfig):
    r"""Qwen3.5(-MoE) text fields, unchanged in meaning, plus the Clover block-diffusion fields.

    mask_token_id: the token every undecoded block position starts as.
    trained_block_sizes: block sizes the checkpoint was trained for; the sampler refuses others.
    num_experts: 0 gives the dense Qwen3.5 MLP (`intermediate_size`), >0 the Qwen3.5-MoE sparse block.
    """

    model_type = "clover"

    vocab_size: int = 6144
    hidden_size: int = 256
    intermediate_size: int = 704
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    hidden_act: str = "silu"
    max_position_embeddings: int = 4096
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-6
    use_cache: bool = True
    tie_word_embeddings: bool = False
    rope_parameters: RopeParameters | dict | None = None
    attention_bias: bool = False
    attention_dropout: float | int = 0.0
    head_dim: int = 64
    linear_conv_kernel_dim: int = 4
    linear_key_head_dim: int = 64
    linear_value_head_dim: int = 64
    linear_num_key_heads: int = 4
    linear_num_value_heads: int = 4
    num_experts: int = 0
    num_experts_per_tok: int = 2
    moe_intermediate_size: int = 256
    shared_expert_intermediate_size: int = 256
    output_router_logits: bool = False
    router_aux_loss_coef: float = 0.001
    layer_types: list[str] | None = None
    pad_token_id: int | None = 0
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = 2
    mask_token_id: int | None = 3
    trained_block_sizes: list[int] | None = None

    def __post_init__(self, **kwargs):
        kwargs.pop("model_type", None)  # a Qwen3.5 config loaded as Clover becomes a Clover config
        kwargs.setdefault("partial_rotary_factor", 0.25)  # Qwen3.5's default: rotate a quarter of head_dim
        if self.layer_types is None:
            interval = kwargs.pop("full_attention_interval", 4)
            self.layer_types = [
                "linear_attention" if (i + 1) % interval else "full_attention"
                for i in range(self.num_hidden_layers)
            ]
        if self.trained_block_sizes is None:
            self.trained_block_sizes = [1, 32]
        # Qwen3.5 checkpoints carry multimodal rope keys that text-only Clover ignores.
        for key in ("mrope_section", "mrope_interleaved"):
            if isinstance(self.rope_parameters, dict):
                self.rope_parameters.pop(key, None)
        super().__post_init__(**kwargs)

    def validate_architecture(self):
        super().validate_architecture()
        if len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(
                f"layer_types has {len(self.layer_types)} entries for {self.num_hidden_layers} layers"
            )
        if self.mask_token_id is None or not 0 <= self.mask_token_id < self.vocab_size:
            raise ValueError(f"mask_token_id {self.mask_token_id} is not inside the vocabulary ({self.vocab_size})")
        if not self.trained_block_sizes or any(b < 1 for b in self.trained_block_sizes):
            raise ValueError(f"trained_block_sizes must be positive integers, got {self.trained_block_sizes}")

    @classmethod
    def preset(cls, name: str, **overrides) -> CloverConfig:
        """A named configuration (`tiny`, `demo`) with field overrides."""
        if name not in PRESETS:
            raise ValueError(f"unknown Clover preset {name!r}; choose one of {sorted(PRESETS)}")
        return cls(**{**PRESETS[name], **overrides})

    @property
    def eos_token_ids(self) -> list[int]:
        eos = self.eos_token_id
        return [] if eos is None else [eos] if isinstance(eos, int) else list(eos)


__all__ = ["CloverConfig", "PRESETS"]

"""Tiny random transformers models saved with `save_pretrained`, with the demo checkpoint's tokenizer.

Random weights write garbage: tests built on these assert streaming, stats, cancel and errors, never
the page. A chat template is attached so chat servers (`transformers serve`) can prompt them.
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import AutoTokenizer

from model_worker.config import DEFAULT_MODEL_PATH

# ChatML, as Qwen models have it: `transformers serve` finds where the reply starts by its anchor.
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
CONTEXT = 4096


def demo_tokenizer():
    tok = AutoTokenizer.from_pretrained(DEFAULT_MODEL_PATH)
    tok.chat_template = CHAT_TEMPLATE
    return tok


def save_tiny_qwen(folder: Path, seed: int = 0) -> Path:
    """A two-layer `Qwen3_5ForCausalLM` (one Gated DeltaNet layer, one attention layer), ~0.3M parameters."""
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig

    tok = demo_tokenizer()
    torch.manual_seed(seed)
    config = Qwen3_5TextConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=2,
        linear_key_head_dim=8, linear_value_head_dim=8, max_position_embeddings=CONTEXT,
        layer_types=["linear_attention", "full_attention"], pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id, bos_token_id=None,
    )
    Qwen3_5ForCausalLM(config).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def save_tiny_diffusion_gemma(folder: Path, seed: int = 0, canvas: int = 16) -> Path:
    """A two-layer `DiffusionGemmaForBlockDiffusion` (two experts, a one-layer vision tower it never uses),
    ~0.2M parameters, `canvas`-token blocks, 4 denoising steps at most."""
    from transformers import DiffusionGemmaConfig, DiffusionGemmaForBlockDiffusion

    tok = demo_tokenizer()
    torch.manual_seed(seed)
    vocab = len(tok)
    text = dict(vocab_size=vocab + 3, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=1, head_dim=16, global_head_dim=16,
                max_position_embeddings=CONTEXT, sliding_window=64,
                layer_types=["sliding_attention", "full_attention"], num_experts=2, top_k_experts=1,
                moe_intermediate_size=32, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                bos_token_id=None)
    vision = dict(model_type="gemma4_vision", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, num_key_value_heads=2, head_dim=8, position_embedding_size=64)
    # The image tokens sit past the text vocabulary, so no prompt ever holds one.
    config = DiffusionGemmaConfig(text_config=text, vision_config=vision, canvas_length=canvas,
                                  boi_token_id=vocab, eoi_token_id=vocab + 1, image_token_id=vocab + 2)
    model = DiffusionGemmaForBlockDiffusion(config).eval()
    model.generation_config.max_denoising_steps = 4
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder

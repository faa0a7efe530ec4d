"""Clover block-diffusion model: Qwen3.5 hybrid layers, block-causal everywhere, exact block caching.

Block diffusion aligns blocks to absolute positions from 0; verified decoding instead keeps a history
written at block size 1 and drafts a block wherever it ends. Every layer computes f(history, block): softmax
attention sees the whole history and the whole current block; GDN layers start from the recurrent
state at the block start. Logits at position i predict token i + 1, as in the autoregressive model the
weights may come from (SDAR / Fast-dLLM v2 style shift): the first token of a block is predicted by the
last position of the previous (committed) block, the others by the block's own earlier positions.
"""

from __future__ import annotations

import functools
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention.bias import causal_lower_right
from transformers import PreTrainedModel
from transformers import initialization as init
from transformers.modeling_outputs import CausalLMOutput
from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import (
    Qwen3_5MoeExperts,
    Qwen3_5MoeRMSNorm,
    Qwen3_5MoeTopKRouter,
)

from . import fast, kernels
from .cache import CloverCache
from .configuration import CloverConfig
from .delta_rule import MIN_CHUNK, LazyStates
from .layers import CloverDecoderLayer, CloverGatedDeltaNet, LayerState, Pass


class CheckpointError(RuntimeError):
    """A checkpoint folder is missing or cannot be loaded."""


@functools.cache
def block_causal(
    length: int, block_size: int, device: torch.device, inference: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Masks for a stream of whole blocks: clean (L, L) and noisy-vs-[clean, noisy] (L, 2L).

    Keyed by inference mode: a tensor made under torch.inference_mode cannot enter autograd later.
    """
    blk = torch.arange(length, device=device) // block_size
    clean = blk[None, :] <= blk[:, None]
    noisy = torch.cat([blk[None, :] < blk[:, None], blk[None, :] == blk[:, None]], 1)
    return clean, noisy


class CloverPreTrainedModel(PreTrainedModel):
    config_class = CloverConfig
    config: CloverConfig
    base_model_prefix = "model"
    _no_split_modules = ["CloverDecoderLayer"]
    _keys_to_ignore_on_load_unexpected = [r"^mtp.*", r"^model.visual.*"]
    _supports_sdpa = True

    def _init_weights(self, module):
        super()._init_weights(module)
        std = self.config.initializer_range
        if isinstance(module, CloverGatedDeltaNet):
            init.ones_(module.dt_bias)
            init.copy_(module.A_log, torch.empty_like(module.A_log).uniform_(0.01, 16).log_())
            init.zeros_(module.conv_right)
            init.zeros_(module.joint_gate)
            init.constant_(module.joint_log_scale, 0.5 * float(torch.log(torch.tensor(float(module.head_k_dim)))))
            init.zeros_(module.memory_bias)
            init.ones_(module.block_calibration)
        elif isinstance(module, Qwen3_5MoeRMSNorm):
            init.zeros_(module.weight)  # that norm scales by (1 + weight)
        elif isinstance(module, Qwen3_5MoeExperts):
            init.normal_(module.gate_up_proj, mean=0.0, std=std)
            init.normal_(module.down_proj, mean=0.0, std=std)
        elif isinstance(module, Qwen3_5MoeTopKRouter):
            # Unlike Qwen3.5-MoE, on the router itself: transformers skips `_init_weights` for custom-code
            # modules without parameters of their own (the sparse block), which left every router at zero
            # and sent every token to experts 0..k-1.
            init.normal_(module.weight, mean=0.0, std=std)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *args, **kwargs):
        """Load a local checkpoint folder; a missing or broken one raises CheckpointError naming it."""
        path = Path(pretrained_model_name_or_path)
        if not path.is_dir():
            raise CheckpointError(f"no checkpoint folder at {path}")
        if not (path / "config.json").is_file():
            raise CheckpointError(f"checkpoint folder {path} has no config.json")
        try:
            # No hub: a local folder only. (The Auto classes of transformers >= 5.25 pass the flag on themselves.)
            kwargs["local_files_only"] = True
            return super().from_pretrained(str(path), *args, **kwargs)
        except Exception as exc:  # transformers raises OSError, ValueError, safetensors and JSON errors
            raise CheckpointError(f"checkpoint folder {path} could not be loaded: {exc}") from exc


class CloverModel(CloverPreTrainedModel):
    def __init__(self, config: CloverConfig):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, config.pad_token_id)
        self.layers = nn.ModuleList(CloverDecoderLayer(config, i) for i in range(config.num_hidden_layers))
        self.norm = Qwen3_5MoeRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self._rope: dict = {}
        self.post_init()

    def rope(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos, sin (N, Q, rot) for positions (N, Q), from a table built once per device and dtype.

        Same fp32 arithmetic as Qwen3.5's rotary module (its three mrope sections coincide for text).
        """
        key = (positions.device, dtype, torch.is_inference_mode_enabled())
        if key not in self._rope:
            rope = self.config.rope_parameters
            dim = int(self.config.head_dim * rope.get("partial_rotary_factor", 1.0))
            inv_freq = 1.0 / (rope["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
            size = self.config.max_position_embeddings + 2 * max(self.config.trained_block_sizes)
            freqs = torch.arange(size, dtype=torch.float)[:, None] * inv_freq[None, :]
            emb = torch.cat([freqs, freqs], -1).to(positions.device)
            self._rope[key] = (emb.cos().to(dtype), emb.sin().to(dtype))
        cos, sin = self._rope[key]
        return cos[positions], sin[positions]

    def forward(self, input_ids: torch.LongTensor, block_size: int = 1) -> torch.Tensor:
        """Uncached forward over whole blocks from position 0: last hidden state (N, L, D)."""
        n, length = input_ids.shape
        if length % block_size:
            raise ValueError(f"input of {length} tokens is not a whole number of blocks of {block_size}")
        h = self.embed_tokens(input_ids)
        cos, sin = self.rope(torch.arange(length, device=h.device)[None], h.dtype)
        mask, _ = block_causal(length, block_size, h.device, torch.is_inference_mode_enabled())
        p = Pass(block_size, cos, sin, mask=mask)
        for layer in self.layers:
            h = layer(h, p, None)
        return fast.norm(self.norm, h)


class CloverForBlockDiffusion(CloverPreTrainedModel):
    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}

    def __init__(self, config: CloverConfig):
        super().__init__(config)
        self.model = CloverModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def forward(self, input_ids: torch.LongTensor, block_size: int = 1, **_) -> CausalLMOutput:
        """Uncached block-causal logits (N, L, V); logits[:, i] predict token i + 1."""
        return CausalLMOutput(logits=self.lm_head(self.model(input_ids, block_size)))

    def set_kernels(self, choice: str) -> None:
        """Which delta-rule kernels long causal passes run on (`kernels.KERNELS`); refuses a choice this
        process cannot run (ValueError, saying why)."""
        kernels.check(choice, self.lm_head.weight.device)
        for module in self.modules():
            if isinstance(module, CloverGatedDeltaNet):
                module.kernels = choice

    # ---- inference against a cache -------------------------------------------------------------

    def new_cache(self, batch: int, capacity: int) -> CloverCache:
        """Empty history for `batch` sequences of up to `capacity` positions (scratch blocks included)."""
        cfg, p = self.config, next(self.parameters())
        layers = []
        for layer in self.model.layers:
            if layer.layer_type == "linear_attention":
                gdn = layer.linear_attn
                layers.append(LayerState(
                    recurrent=torch.zeros(batch, gdn.num_v_heads, gdn.head_k_dim, gdn.head_v_dim, device=p.device),
                    conv=torch.zeros(batch, gdn.conv_dim, gdn.conv_kernel_size - 1, device=p.device, dtype=p.dtype),
                ))
            else:
                shape = (batch, cfg.num_key_value_heads, capacity, cfg.head_dim)
                layers.append(LayerState(key=torch.zeros(shape, device=p.device, dtype=p.dtype),
                                         value=torch.zeros(shape, device=p.device, dtype=p.dtype)))
        return CloverCache(layers, [0] * batch)

    def decode(
        self, input_ids: torch.LongTensor, cache: CloverCache, *, block_size: int, commit: int = 0,
        keep: slice | torch.Tensor = slice(None), project: bool = True, trial: bool = False,
        lower_right: bool | None = None, static: bool = False,
    ) -> torch.Tensor:
        """One forward over whole blocks right after each row's history; the first `commit` blocks become
        history (keys, GDN and conv state advance), the rest only read it. A `trial` forward commits
        nothing yet: `accept` then folds in as many of its leading blocks as each row keeps.

        Returns fp32 logits of `keep`: a slice of positions (N, len, V), or flat indices into the
        (N * Q) positions (K, V), so the vocabulary projection runs only where a prediction is needed.
        Without `project`, the final hidden states of `keep` instead: `logits(h)` projects them later.
        `lower_right` (default: on CUDA) passes a causal pass over rows of one length to attention as
        SDPA's lower-right causal bias instead of a boolean mask (the same visibility, tested equal).
        `static` gives the forward shapes that do not depend on the history's length, the form a CUDA
        graph can capture and replay: keys are written at each row's position on the device and
        attention reads the cache's whole capacity under a mask built on the device.
        """
        n, q = input_ids.shape
        lengths = cache.positions  # on the device: no host copy per forward
        uniform = cache.lengths[0] if all(x == cache.lengths[0] for x in cache.lengths) else None
        key_len = max(cache.lengths) + q
        if key_len > cache.capacity:
            raise ValueError(f"cache holds {cache.capacity} positions, this forward needs {key_len}")
        if static:
            uniform, key_len = None, cache.capacity
        if trial and commit:
            raise ValueError("a trial forward commits later, through accept(); commit must be 0")
        h = self.model.embed_tokens(input_ids)
        cos, sin = self.model.rope(lengths[:, None] + torch.arange(q, device=h.device), h.dtype)
        mask = None
        causal = uniform is not None and block_size == 1 and q > 1
        if causal and (h.is_cuda if lower_right is None else lower_right):
            # Every row at one length, causal within the pass: SDPA's lower-right causal bias runs the
            # flash kernel with no mask in memory (a verify forward, a prefill chunk).
            mask = causal_lower_right(q, key_len)
        elif uniform is None or q > block_size:
            limit = lengths[:, None] + (torch.arange(q, device=h.device) // block_size + 1) * block_size
            mask = (torch.arange(key_len, device=h.device)[None, None, :] < limit[:, :, None])[:, None]
        p = Pass(block_size, cos, sin, mask=mask, lengths=lengths, offset=uniform, key_len=key_len, commit=commit,
                 trial=trial)
        for layer, state in zip(self.model.layers, cache.layers, strict=True):
            h = layer(h, p, state)
        if commit:
            cache.lengths[:] = [x + commit * block_size for x in cache.lengths]
            cache.positions.add_(commit * block_size)
        h = h[:, keep] if isinstance(keep, slice) else h.reshape(n * q, -1).index_select(0, keep)
        h = fast.norm(self.model.norm, h)
        return self.logits(h) if project else h

    def accept(self, cache: CloverCache, blocks: list[int], *, block_size: int) -> None:
        """Commit the first `blocks[i]` blocks of row i's last trial forward into the history.

        Attention keys of the whole trial forward are already in place (past a row's length they are
        scratch); GDN layers take the state at the chosen block start and the conv inputs before it.
        """
        if len(blocks) != len(cache.lengths):
            raise ValueError(f"accept needs one count per row: {len(cache.lengths)} rows, {len(blocks)} counts")
        rows = None
        for state in cache.layers:
            if state.recurrent is None:
                continue
            if state.trial is None:
                raise ValueError("accept() follows a trial forward (decode(..., trial=True)); there was none")
            states, pre = state.trial
            state.trial = None
            if rows is None:
                device, most = state.recurrent.device, pre.shape[-1] // block_size
                if min(blocks) < 0 or max(blocks) > most:
                    raise ValueError(f"accept counts {blocks} outside 0..{most} blocks")
                rows = torch.arange(len(blocks), device=device)
                same = blocks[0] if all(b == blocks[0] for b in blocks) else None
                # the caller has the counts on the host (it read them once for the round's text)
                idx = None if same is not None else torch.tensor(blocks, device=device)
            width = state.conv.shape[-1]
            if same is not None:  # one count for every row (always so for one sequence): slices
                state.recurrent.copy_(states.after(same * block_size) if isinstance(states, LazyStates)
                                      else states[:, same])
                kept = torch.cat([state.conv, pre[..., : same * block_size]], -1)
                state.conv.copy_(kept[..., kept.shape[-1] - width :])
                continue
            state.recurrent.copy_(states.after(idx * block_size) if isinstance(states, LazyStates)
                                  else states[rows, idx])
            full = torch.cat([state.conv, pre], -1)  # (N, C, W + T)
            ends = width + idx * block_size  # exclusive end of each row's kept inputs
            cols = ends[:, None] - width + torch.arange(width, device=full.device)
            state.conv.copy_(full.gather(2, cols[:, None, :].expand(-1, full.shape[1], -1)))
        cache.lengths[:] = [x + b * block_size for x, b in zip(cache.lengths, blocks, strict=True)]
        if all(b == blocks[0] for b in blocks):
            cache.positions.add_(blocks[0] * block_size)
        else:
            cache.positions.add_(torch.tensor(blocks, device=cache.positions.device) * block_size)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """fp32 vocabulary logits of final hidden states (from `decode(..., project=False)`)."""
        return self.lm_head(hidden).float()

    def prefill(self, input_ids: torch.LongTensor, cache: CloverCache, *, block_size: int,
                chunk: int = 512) -> torch.Tensor:
        """Commit whole prompt blocks (1, L) into a one-row cache; logits (1, V) of the last position."""
        step = max(chunk // block_size, 1) * block_size
        logits = None
        for start in range(0, input_ids.shape[1], step):
            piece = input_ids[:, start : start + step]
            logits = self.decode(piece, cache, block_size=block_size, commit=piece.shape[1] // block_size,
                                 keep=slice(-1, None))
        return logits[:, -1]

    def prefill_rows(self, prompts: list[torch.Tensor], cache: CloverCache, *, chunk: int = 512) -> int:
        """Commit several prompts (1-D, lengths may differ) into an empty cache of as many rows, at block
        size 1, every row in each forward (batched prefill); the number of forwards.

        The length they share is prefilled as `prefill` does, every row at once; the rest runs as trial
        forwards of at most `MIN_CHUNK` tokens, each row accepting only its own tokens (a row whose
        prompt has ended accepts none), so no padding reaches any row's history.
        """
        if len(prompts) != len(cache.lengths) or any(cache.lengths):
            raise ValueError(f"prefill_rows needs an empty cache of {len(prompts)} rows")
        sizes = [len(p) for p in prompts]
        shared, longest = min(sizes), max(sizes)
        forwards = 0
        if shared:
            ids = torch.stack([p[:shared] for p in prompts])
            for start in range(0, shared, chunk):
                self.decode(ids[:, start : start + chunk], cache, block_size=1,
                            commit=min(chunk, shared - start), keep=slice(0, 0), project=False)
                forwards += 1
        pad = self.config.pad_token_id or 0
        for start in range(shared, longest, MIN_CHUNK):
            width = min(MIN_CHUNK, longest - start)
            piece = torch.stack([F.pad(p[start : start + width], (0, width - len(p[start : start + width])),
                                       value=pad) for p in prompts])
            self.decode(piece, cache, block_size=1, trial=True, keep=slice(0, 0), project=False)
            self.accept(cache, [min(max(n - start, 0), width) for n in sizes], block_size=1)
            forwards += 1
        return forwards


__all__ = ["CheckpointError", "CloverForBlockDiffusion", "CloverModel", "CloverPreTrainedModel", "block_causal"]

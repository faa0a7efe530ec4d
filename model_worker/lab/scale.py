"""The engine's forwards at a published model's shape, with random weights, on one device.

`python -m model_worker.lab.bench --scale clover-35b-a3b --random-weights [--layers N] --device cuda|cpu --json`

The model is built on the meta device, given storage on the target device (`to_empty`) and initialised
there in bf16, so 35B parameters never pass through fp32 or host memory. With `--layers N` only N
layers are built (the shape's layer pattern, with an attention layer among them from N = 2) and each
time is also given scaled to the full depth: the vocabulary head timed apart, the rest times
depth / N. Per item: median milliseconds (synchronised, after warm-up), host synchronisations and
operators per call (`counters`; CUDA kernels too on CUDA), distinct experts per MoE layer, peak memory,
and the weight-read floor (bytes of weights the call touches at the routing measured / HBM bandwidth).
"""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Callable

import torch

from model_worker.clover import CloverConfig, CloverForBlockDiffusion, fast, kernels
from model_worker.clover.delta_rule import MIN_CHUNK
from model_worker.clover.graphs import CapturedForward
from model_worker.lab.counters import count, cuda_kernels
from model_worker.sampler import preset
from model_worker.sampler.verified import PREFILL_CHUNK, _Draws, draft_and_verify, prefill_chunk

HBM_BYTES_PER_S = 4.8e12  # H200
# The Qwen3.5-MoE defaults (transformers' Qwen3_5MoeTextConfig), which Clover-35B-A3B keeps.
SCALES: dict[str, dict] = {
    "clover-35b-a3b": dict(
        vocab_size=248320, hidden_size=2048, intermediate_size=5120, num_hidden_layers=40,
        num_attention_heads=16, num_key_value_heads=2, head_dim=256, linear_conv_kernel_dim=4,
        linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32,
        num_experts=256, num_experts_per_tok=8, moe_intermediate_size=512, shared_expert_intermediate_size=512,
        max_position_embeddings=32768, mask_token_id=248077, eos_token_id=248044, pad_token_id=248044,
        trained_block_sizes=[1, 32],
    ),
    # For tests and quick checks: the tiny preset with experts.
    "tiny-moe": dict(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=2,
        linear_key_head_dim=8, linear_value_head_dim=8, num_experts=16, num_experts_per_tok=4,
        moe_intermediate_size=16, shared_expert_intermediate_size=16, max_position_embeddings=8192,
        mask_token_id=3, eos_token_id=2, pad_token_id=0, trained_block_sizes=[1, 32],
    ),
}
BLOCK = 32  # the draft / block-diffusion block size (the demo's)
ACCEPT = 16  # tokens a timed round keeps (the demo's verified decoding averages about 16 per round)


def scale_config(scale: str, layers: int | None) -> tuple[CloverConfig, int]:
    """The config to build (`layers` of the shape's pattern) and the shape's full depth."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    full = CloverConfig(**SCALES[scale])
    depth = full.num_hidden_layers
    n = depth if layers is None else layers
    if not 1 <= n <= depth:
        raise ValueError(f"--layers must be between 1 and {depth} for {scale}, got {n}")
    types = list(full.layer_types[:n])
    if n >= 2 and "full_attention" not in types:
        types[-1] = "full_attention"  # time both kinds of layer
    return CloverConfig(**{**SCALES[scale], "num_hidden_layers": n, "layer_types": types}), depth


def check_device(device: str) -> torch.device:
    if device not in ("cpu", "cuda"):
        raise ValueError(f"--device must be cpu or cuda for --scale, got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device cuda, but this torch ({torch.__version__}) sees no CUDA GPU; "
                         "run with --device cpu --layers 1")
    return torch.device(device)


def estimate_bytes(config: CloverConfig, *, batch: int, history: int, prefill: int,
                   chunk: int = PREFILL_CHUNK) -> int:
    """bf16 weights plus caches and the largest activations of the bench, from a meta-device model;
    `chunk`: the prompt tokens of one prefill forward on the device (`prefill_chunk`)."""
    with torch.device("meta"):
        model = CloverForBlockDiffusion(config)
    weights = sum(p.numel() for p in model.parameters()) * 2
    capacity = max(history, prefill) + 2 * BLOCK + 64
    cache = 0
    for layer in model.model.layers:
        if layer.layer_type == "linear_attention":
            g = layer.linear_attn
            cache += batch * (g.num_v_heads * g.head_k_dim * g.head_v_dim * 4 + g.conv_dim * 3 * 2)
        else:
            cache += batch * 2 * config.num_key_value_heads * capacity * config.head_dim * 2
    chunk = min(chunk, prefill)  # prefill piece: expert rows, GDN chunk tensors and fp32 logits of one position
    activations = batch * chunk * (config.num_experts_per_tok * (config.hidden_size + 3 * config.moe_intermediate_size)
                                   + 64 * config.hidden_size) * 4 + batch * BLOCK * config.vocab_size * 4
    return weights + cache + activations


def available_bytes(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    with open("/proc/meminfo") as f:
        info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f}
    return info.get("MemAvailable", info["MemFree"])


def _fewer_layers(config: CloverConfig, batches, history: int, prefill: int, have: int, chunk: int) -> str:
    """Advice naming how many layers fit in `have` bytes (90% of it)."""
    sizes = [estimate_bytes(CloverConfig(**{**config.to_dict(), "num_hidden_layers": n,
                                            "layer_types": config.layer_types[:n]}),
                            batch=max(batches), history=history, prefill=prefill, chunk=chunk) for n in (1, 2)]
    per_layer, base = sizes[1] - sizes[0], 2 * sizes[0] - sizes[1]
    fits = int((0.9 * have - base) // max(per_layer, 1))
    if fits < 1:
        return "not even one layer fits: use a smaller --scale, --batches or --prefill"
    return f"pass --layers N with N <= {fits}"


def build(config: CloverConfig, device: torch.device, seed: int = 0) -> CloverForBlockDiffusion:
    """Random bf16 weights made on `device`: meta-device modules, `to_empty`, then the model's own init."""
    with torch.device("meta"):
        model = CloverForBlockDiffusion(config)
    model = model.to(torch.bfloat16).to_empty(device=device)
    torch.manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():  # the meta-device init marked every module done; redo it for real
            module.__dict__.pop("_is_hf_initialized", None)
            model._init_weights(module)
    model.model._rope.clear()
    return model.eval()


def run(scale: str, *, device: str = "cpu", layers: int | None = None, history: int = 1024, prefill: int = 4096,
        batches: tuple[int, ...] = (1, 8), repeats: int = 5, warmup: int = 2, graphs: bool = False,
        kernel_choice: str = "auto") -> dict:
    """The figures for every item at every batch size (see the module docstring). `kernel_choice`: the
    delta-rule kernels of the prefill (`kernels.KERNELS`); where that is fla the prefill is also timed on
    the plain-torch rule (`..._torch_rule`), in the same run."""
    dev = check_device(device)
    kernels.check(kernel_choice, dev)
    config, depth = scale_config(scale, layers)
    for name, value, least in (("--history", history, 1), ("--prefill", prefill, 1), ("--repeats", repeats, 1)):
        if value < least:
            raise ValueError(f"{name} must be at least {least}, got {value}")
    if history + 2 * BLOCK > config.max_position_embeddings or prefill > config.max_position_embeddings:
        raise ValueError(f"--history and --prefill must fit the context of {config.max_position_embeddings} tokens")
    chunk = prefill_chunk(dev)
    need = estimate_bytes(config, batch=max(batches), history=history, prefill=prefill, chunk=chunk)
    have = available_bytes(dev)
    if need > 0.9 * have:
        raise ValueError(f"{scale} with {config.num_hidden_layers} layers needs about {need / 2**30:.1f} GiB on "
                         f"{dev.type}, {have / 2**30:.1f} GiB is free; {_fewer_layers(config, batches, history, prefill, have, chunk)}")
    started = time.perf_counter()
    model = build(config, dev)
    model.set_kernels(kernel_choice)
    built_s = time.perf_counter() - started
    fla = kernels.wanted(kernel_choice, torch.empty(0, device=dev))
    out = {
        "scale": scale, "device": dev.type, "dtype": "bfloat16", "torch": torch.__version__,
        "threads": torch.get_num_threads(), "layers_built": config.num_hidden_layers, "layers_full": depth,
        "scaled_to_full_depth": config.num_hidden_layers != depth, "history": history, "prefill": prefill,
        "block_size": BLOCK, "accepted_per_round": ACCEPT, "repeats": repeats, "prefill_chunk": chunk,
        "parameters_built": sum(p.numel() for p in model.parameters()), "build_s": round(built_s, 2),
        "hbm_bytes_per_s": HBM_BYTES_PER_S, "kernels": kernel_choice,
        "prefill_delta_rule": "fla" if fla and min(chunk, prefill) > MIN_CHUNK else "torch",
        "note": ("CPU figures: ms and memory are this machine's; syncs, operators and experts hold on any device"
                 if dev.type == "cpu" else "CUDA figures"),
        "items": {},
    }
    sizes = _layer_bytes(config, depth, scale)
    for batch in batches:
        for name, (call, positions) in _items(model, dev, batch, history, prefill, graphs, fla and kernel_choice).items():
            key = f"{name}_bs{batch}"
            out["items"][key] = _measure(model, call, positions, batch, config, depth, sizes, repeats, warmup)
            twin = out["items"].get(key.replace("_graph_", "_"))
            if name.endswith("_graph") and twin is not None and not out["items"][key]["forwards"]:
                # a graph replays the same forwards as its eager twin: the same weights and experts
                out["items"][key].update({k: twin[k] for k in ("experts_per_layer", "forwards",
                                                              "weight_bytes_full_depth", "weight_read_floor_ms")})
    out["sync_violations"] = sync_violations(out)
    return out


def sync_violations(result: dict) -> list[str]:
    """Items over the engine's targets: no host sync inside a forward, at most one per verified round."""
    bad = []
    for name, r in result["items"].items():
        allowed = 1 if name.startswith("verified_round") else 0
        if r["host_syncs"] > allowed:
            bad.append(f"{name}: {r['host_syncs']} host syncs {r['sync_sites']}, at most {allowed}")
    return bad


def _items(model, dev, batch: int, history: int, prefill: int, graphs: bool = False,
           fla: str | bool = False) -> dict[str, tuple[Callable[[], None], int]]:
    """Each item: a call that leaves the cache as it found it (lengths rewound), and the positions it projects.
    With `graphs`, also the one-token step, draft, verify and verified round as captured forwards
    (`model_worker.clover.graphs`: CUDA graphs on CUDA, their static forms run eagerly elsewhere). With
    `fla` (the kernel choice that puts the prefill's delta rule on fla), also the prefill on the plain-torch
    rule."""
    v = model.config.vocab_size
    gen = torch.Generator().manual_seed(0)
    hist = torch.randint(10, v, (batch, history), generator=gen).to(dev)
    cache = model.new_cache(batch, history + 2 * BLOCK + 64)
    with torch.inference_mode():
        _prefill(model, hist, cache)
    one = torch.randint(10, v, (batch, 1), generator=gen).to(dev)
    window = torch.full((batch, BLOCK), model.config.mask_token_id, device=dev)
    window[:, 0] = one[:, 0]
    # what a verify forward checks: the newest token and 31 drafts (distinct tokens route to more experts)
    drafted = torch.cat([one, torch.randint(10, v, (batch, BLOCK - 1), generator=gen).to(dev)], 1)
    draws = _Draws(preset("verified"), batch, dev)
    rows = list(range(batch))
    keep_block = torch.arange(8, device=dev)  # a denoising step projects its first 8 masked slots (LAZY_SLOTS)

    def one_token():
        model.decode(one, cache, block_size=1, commit=1)
        cache.rewind(1)

    def draft():
        model.decode(window, cache, block_size=BLOCK, keep=slice(0, BLOCK - 1))

    def verify():
        model.decode(drafted, cache, block_size=1, trial=True)
        model.accept(cache, [ACCEPT] * batch, block_size=1)
        cache.rewind(ACCEPT)

    def verified_round():
        drafts, accepted, nxt = draft_and_verify(model, cache, one[:, 0], BLOCK, draws, rows)
        read = torch.cat([drafts, accepted[:, None], nxt[:, None]], 1).tolist()  # the round's one read
        counts = [r[-2] + 1 for r in read]  # the accepted drafts and the token after them
        model.accept(cache, counts, block_size=1)
        cache.rewind(counts)

    def block_step():
        model.decode(window, cache, block_size=BLOCK, keep=keep_block)

    prompt = torch.randint(10, v, (batch, prefill), generator=gen).to(dev)

    def prefill_call():
        _prefill(model, prompt, model.new_cache(batch, prefill + 64))

    items = {"one_token": (one_token, 1), "draft": (draft, BLOCK - 1), "verify_accept": (verify, BLOCK),
             "verified_round": (verified_round, 2 * BLOCK - 1), "block_step": (block_step, 8),
             f"prefill_{prefill}": (prefill_call, 1)}
    if fla:
        def prefill_torch_rule():
            model.set_kernels("torch")
            try:
                prefill_call()
            finally:
                model.set_kernels(fla)

        items[f"prefill_{prefill}_torch_rule"] = (prefill_torch_rule, 1)
    if graphs:
        items.update(_captured_items(model, cache, one, window, drafted, draws, rows))
    return items


def _captured_items(model, cache, one, window, drafted, draws, rows) -> dict:
    """The decoding items again, each forward captured once against the bench's cache."""
    batch = one.shape[0]
    with torch.inference_mode():
        step = CapturedForward(model, cache, (batch, 1), block_size=1, commit=1)
        drafter = CapturedForward(model, cache, (batch, BLOCK), block_size=BLOCK, keep=slice(0, BLOCK - 1))
        checker = CapturedForward(model, cache, (batch, BLOCK), block_size=1, trial=True)

    def one_token():
        step(one)
        cache.rewind(1)

    def draft():
        drafter(window)

    def verify():
        checker(drafted)
        model.accept(cache, [ACCEPT] * batch, block_size=1)
        cache.rewind(ACCEPT)

    def verified_round():
        drafts, accepted, nxt = draft_and_verify(model, cache, one[:, 0], BLOCK, draws, rows,
                                                 forwards=(drafter, checker))
        read = torch.cat([drafts, accepted[:, None], nxt[:, None]], 1).tolist()  # the round's one read
        counts = [r[-2] + 1 for r in read]
        model.accept(cache, counts, block_size=1)
        cache.rewind(counts)

    return {"one_token_graph": (one_token, 1), "draft_graph": (draft, BLOCK - 1),
            "verify_accept_graph": (verify, BLOCK), "verified_round_graph": (verified_round, 2 * BLOCK - 1)}


def _prefill(model, ids: torch.Tensor, cache) -> None:
    """Commit every row's prompt at block size 1 in the pieces verified decoding prefills in on this
    device (`prefill_chunk`; what `prefill` does for one row)."""
    chunk = prefill_chunk(ids.device)
    for start in range(0, ids.shape[1], chunk):
        piece = ids[:, start : start + chunk]
        model.decode(piece, cache, block_size=1, commit=piece.shape[1], keep=slice(-1, None))


def _measure(model, call, positions: int, batch: int, config, depth: int, sizes: dict, repeats: int,
             warmup: int) -> dict:
    dev = next(model.parameters()).device
    cuda = dev.type == "cuda"
    timed = torch.inference_mode()(call)
    for _ in range(warmup):
        timed()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        timed()
        if cuda:
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    ms = statistics.median(times)
    with count() as c:
        timed()
    experts, expert_reads, forwards = _experts_hit(model, timed)
    head_ms = _head_ms(model, batch * positions, repeats)
    scale = depth / config.num_hidden_layers
    item = {
        "ms": round(ms, 3),
        "ms_full_depth": round(head_ms + (ms - head_ms) * scale, 3) if scale != 1 else round(ms, 3),
        "head_ms": round(head_ms, 3),
        "host_syncs": c.syncs,
        "sync_sites": dict(c.where),
        "aten_ops": c.ops,
        "aten_ops_full_depth": round(c.ops * scale),
        "experts_per_layer": experts,
        "forwards": forwards,
        "peak_memory_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1) if cuda
        else round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if cuda:
        item["cuda_kernels"] = cuda_kernels(timed)
    # every forward of the call reads the head and each layer's dense weights, plus the experts it routes to
    floor = forwards * sizes["head"] + sum(forwards * sizes[kind] + expert_reads * sizes["expert"]
                                          for kind in sizes["layers"])
    item["weight_bytes_full_depth"] = floor
    item["weight_read_floor_ms"] = round(floor / HBM_BYTES_PER_S * 1e3, 3)
    return item


def _experts_hit(model, call) -> tuple[float | None, float, int]:
    """Per MoE layer, averaged over layers: distinct experts one forward routes to (mean over the call's
    forwards), experts read over the whole call (summed over its forwards), and the call's forwards."""
    calls: list[list[int]] = []
    hooks = []
    for layer in model.model.layers:
        gate = getattr(layer.mlp, "gate", None)
        if gate is None:
            continue
        hits: list[int] = []
        calls.append(hits)
        hooks.append(gate.register_forward_hook(lambda _m, _i, out, hits=hits: hits.append(out[2].unique().numel())))
    try:
        call()
    finally:
        for h in hooks:
            h.remove()
    if not calls:
        return None, 0.0, 1
    if not calls[0]:  # a replayed CUDA graph runs no Python, so no hook saw it
        return None, 0.0, 0
    per_forward = sum(sum(h) / len(h) for h in calls) / len(calls)
    return round(per_forward, 1), sum(map(sum, calls)) / len(calls), len(calls[0])


def _head_ms(model, positions: int, repeats: int) -> float:
    """The final norm and vocabulary projection of `positions` hidden states (not scaled with depth)."""
    p = next(model.parameters())
    h = torch.randn(positions, model.config.hidden_size, device=p.device, dtype=p.dtype)

    @torch.inference_mode()
    def head():
        model.logits(fast.norm(model.model.norm, h))

    head()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        head()
        if p.is_cuda:
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _layer_bytes(config: CloverConfig, depth: int, scale: str) -> dict:
    """Bytes (bf16) of the weights a forward reads at the full depth: per layer kind without routed
    experts, one routed expert, and the head (final norm and vocabulary projection)."""
    full = CloverConfig(**SCALES[scale])
    with torch.device("meta"):
        model = CloverForBlockDiffusion(full)
    bytes_of = lambda m: sum(p.numel() for p in m.parameters()) * 2  # noqa: E731
    kinds = {}
    for layer in model.model.layers:
        if layer.layer_type not in kinds:
            experts = getattr(layer.mlp, "experts", None)
            kinds[layer.layer_type] = bytes_of(layer) - (bytes_of(experts) if experts is not None else 0)
    expert = 0
    if full.num_experts:
        e = model.model.layers[0].mlp.experts
        expert = bytes_of(e) // full.num_experts
    return {**kinds, "expert": expert, "head": bytes_of(model.lm_head) + bytes_of(model.model.norm),
            "layers": [layer.layer_type for layer in model.model.layers][:depth]}


def format_text(result: dict) -> str:
    lines = [f"{result['scale']} on {result['device']} ({result['dtype']}), {result['layers_built']} of "
             f"{result['layers_full']} layers built" + (" (ms also scaled to full depth)" if result["scaled_to_full_depth"]
                                                       else "") + f"; {result['note']}"]
    lines.append(f"{'item':24} {'ms':>10} {'ms full':>10} {'syncs':>6} {'ops':>7} {'experts':>8} {'floor ms':>9} "
                 f"{'peak MB':>9}")
    for name, r in result["items"].items():
        lines.append(f"{name:24} {r['ms']:>10.2f} {r['ms_full_depth']:>10.2f} {r['host_syncs']:>6} {r['aten_ops']:>7} "
                     f"{r['experts_per_layer'] if r['experts_per_layer'] is not None else '-':>8} "
                     f"{r['weight_read_floor_ms']:>9.3f} {r['peak_memory_mb']:>9.0f}")
    return "\n".join(lines)

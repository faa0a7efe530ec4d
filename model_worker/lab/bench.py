"""Benchmark one checkpoint decoded by block diffusion, by verified block drafts and at block size 1, in one run.

`python -m model_worker.lab.bench [--json] [--render] [--prompts N]`

`--scale clover-35b-a3b --random-weights [--layers N] --device cuda|cpu` instead times the engine's
forwards at that shape with random weights (`model_worker.lab.scale`).

The prompt set is fixed: corpus topics asked in words the training questions do not use, in English
and Chinese. Figures count generated tokens only (never prompt or padding).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

from model_worker.config import DEFAULT_MODEL_PATH, REPO_ROOT, resolve_device
from model_worker.lab.slots import corpus_sequences, format_slots, slot_confidence, trained_pages
from model_worker.sampler import PRESETS
from model_worker.sampler.config import FALLBACKS

# (lang, question, corpus slug it should produce). New wording: none of these is a training question.
PROMPTS: tuple[tuple[str, str, str], ...] = (
    ("en", "Explain why the ocean rises and falls twice each day", "tides"),
    ("zh", "为什么海水每天会涨落两次？", "tides"),
    ("en", "Why does the sun feel stronger in summer than in winter?", "seasons-axial-tilt"),
    ("zh", "月亮的样子为什么每天都不一样？", "moon-phases"),
    ("en", "Show me what a plant cell does to turn light into sugar", "zh-photosynthesis"),
    ("zh", "磁铁为什么能吸住铁钉？", "magnetism"),
    ("en", "How does electricity flow around a loop with a battery and a bulb?", "circuits"),
    ("zh", "原子是由什么组成的？", "atom"),
    ("en", "What happens to rain after it falls?", "zh-water-cycle"),
    ("zh", "DNA在细胞分裂前是怎么被复制的？", "dna-replication"),
    ("en", "Why does a longer string make a swing slower?", "pendulum-period"),
    ("zh", "为什么会发生日食？", "zh-eclipses"),
    ("en", "How do nerve cells send messages?", "neuron-firing"),
    ("zh", "为什么地球上的大陆会移动？", "plate-tectonics"),
    ("en", "Why does a boat float but a stone sinks?", "zh-buoyancy"),
    ("zh", "二氧化碳为什么会让地球变暖？", "greenhouse-effect"),
)
DEFAULT_PROMPTS = 4


def run_decoding(backend, prompts, *, warmup: bool = True) -> tuple[dict, list[str]]:
    """Decode every prompt one at a time; summed figures and the pages."""
    from model_worker.sampler import generate

    # The topic is the library page the router picks for the question in the product (`explainer/library/`).
    ids = [backend.prompt_ids(_request(lang, q, slug)) for lang, q, slug in prompts]
    cfg_for = lambda p: replace(backend.sampler, max_new_tokens=min(backend.sampler.max_new_tokens,  # noqa: E731
                                                                     backend.context - len(p)))
    if warmup:  # first calls pay for allocator growth and lazy tables; keep them out of the figures
        generate(backend.model, [ids[0]], replace(cfg_for(ids[0]), max_new_tokens=2 * backend.sampler.block_size))
    _reset_peak(backend)
    totals = {"tokens": 0, "forwards": 0, "seconds": 0.0, "first_block_s": 0.0}
    pages = []
    for prompt in ids:
        [out] = generate(backend.model, [prompt], cfg_for(prompt))
        s = out.stats
        totals["tokens"] += s.tokens
        totals["forwards"] += s.forwards
        totals["seconds"] += s.seconds
        totals["first_block_s"] += s.first_block_s
        pages.append(backend.page_html(out.tokens))  # the page the app would store
    n = len(ids)
    seconds = max(totals["seconds"], 1e-9)
    expected = corpus_titles()
    figures = {
        "decoding": backend.sampler.decoding,
        "block_size": backend.sampler.block_size,
        # The commit rule is diffusion's; the other decodings never read it.
        **{k: getattr(backend.sampler, k) if backend.sampler.decoding == "diffusion" else None
           for k in ("rule", "threshold", "fallback")},
        "prompts": n,
        "tokens": totals["tokens"],
        "forwards": totals["forwards"],
        "tokens_per_forward": round(totals["tokens"] / max(totals["forwards"], 1), 3),
        "forwards_per_s": round(totals["forwards"] / seconds, 2),
        "tokens_per_s": round(totals["tokens"] / seconds, 2),
        "seconds": round(seconds, 3),
        "first_block_s": round(totals["first_block_s"] / n, 4),
        "peak_memory_mb": _peak_mb(backend),
        # Pages whose <title> is that of the corpus page the question asks about: the render check
        # says a page works, not that it answers the question.
        "on_topic": sum(page_title(page) == expected.get(slug) for page, (_, _, slug) in zip(pages, prompts, strict=True)),
    }
    return figures, pages


def corpus_prompts() -> tuple[tuple[str, str, str], ...]:
    """The first training question of every corpus page, with its slug: the words the model was taught
    (for the pages it was trained on) instead of new ones."""
    from model_worker.corpus import load_pages

    return tuple((page.questions[0][0], page.questions[0][1], page.slug) for page in load_pages())


def page_title(html: str) -> str | None:
    found = re.search(r"<title>(.*?)</title>", html, re.S | re.I)
    return found.group(1).strip() if found else None


def corpus_titles() -> dict[str, str | None]:
    """slug -> the <title> of that corpus page."""
    from model_worker.corpus import load_pages

    return {page.slug: page_title(page.html) for page in load_pages()}


def render_reports(pages: list[str]) -> list[dict]:
    """Render-check pages in Chromium with the web tier's `manage.py qa`, one child process for all; each
    page's report in its JSON form, in order.

    The engine never imports the web tier; the command line is the seam, and one browser serves
    every page.
    """
    if not pages:
        return []
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i, html in enumerate(pages):
            path = Path(folder) / f"page-{i}.html"
            path.write_text(html, encoding="utf-8")
            paths.append(str(path))
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE",
                                                                       "explainer.settings.test")}
        done = subprocess.run([sys.executable, "manage.py", "qa", "--json", *paths], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):  # 0 all passed, 1 some failed; anything else: it did not run
            raise RuntimeError(f"render check failed to run: {done.stderr.strip()[-2000:]}")
        results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if len(results) != len(pages):
        raise RuntimeError(f"render check reported {len(results)} of {len(pages)} pages: {done.stderr[-2000:]}")
    return results


def render_pass_rate(pages: list[str]) -> dict:
    """How many pages pass the render check (`render_reports`), and why the others failed."""
    results = render_reports(pages)
    passed = sum(r["passed"] for r in results)
    return {"passed": passed, "checked": len(results), "rate": round(passed / max(len(results), 1), 3),
            "failures": [r["summary"][:300] for r in results if not r["passed"]]}


def bench(path: Path, *, device: str = "auto", prompts: int = DEFAULT_PROMPTS, render: bool = False,
          block_size: int | None = None, rule: str | None = None, threshold: float | None = None,
          fallback: str | None = None, max_new_tokens: int | None = None, threads: int | None = None,
          corpus: bool = False, end_to_end: bool = False) -> dict:
    """The decodings of the same checkpoint on the first `prompts` prompts of the fixed set (of
    `corpus_prompts()` with `corpus`); with `end_to_end`, also the product's (verified) decoding
    through the Celery task and the Redis stream (`model_worker.lab.end_to_end`)."""
    from model_worker.backends.clover import CloverBackend

    prompt_set = corpus_prompts() if corpus else PROMPTS
    if not 1 <= prompts <= len(prompt_set):
        raise ValueError(f"--prompts must be between 1 and {len(prompt_set)}, got {prompts}")
    chosen = prompt_set[:prompts]
    # Settings left as None keep the backend's own `diffusion` decoding.
    chosen_settings = {k: v for k, v in dict(block_size=block_size, rule=rule, threshold=threshold,
                                             fallback=fallback).items() if v is not None}
    diffusion = CloverBackend(path=path, device=device, decoding="diffusion", threads=threads,
                              max_new_tokens=max_new_tokens, **chosen_settings)
    ar = diffusion.with_decoding("ar")  # the same weights in memory, decoded at block size 1
    draft = {"block_size": block_size} if block_size and block_size > 1 else {}
    verified = diffusion.with_decoding("verified", **draft)
    result = {"checkpoint": str(path), "device": resolve_device(device), "threads": torch.get_num_threads(),
              "prompt_set": [{"lang": lang, "question": q, "topic": slug} for lang, q, slug in chosen]}
    pages = {}
    names = ("diffusion", "verified", "ar")
    for name, backend in zip(names, (diffusion, verified, ar), strict=True):
        result[name], pages[name] = run_decoding(backend, chosen)
    for name in ("diffusion", "verified"):
        result[name]["same_page_as_ar"] = sum(x == y for x, y in zip(pages[name], pages["ar"], strict=True))
    if render:
        for name in names:
            result[name]["render"] = render_pass_rate(pages[name])
    if end_to_end:
        from model_worker.lab.end_to_end import end_to_end as through_the_app

        if draft:
            raise ValueError("--end-to-end runs the product's verified preset: leave --block-size out")
        # The worker gets the engine's device and thread count, so the two figures differ only by the app.
        result["end_to_end"] = through_the_app(path, chosen, device=result["device"], threads=result["threads"],
                                               max_new_tokens=max_new_tokens, engine_pages=pages["verified"],
                                               engine=lambda request: _decode_once(verified, request))
    d, v, a = result["diffusion"], result["verified"], result["ar"]
    result["speedup"] = round(d["tokens_per_s"] / max(a["tokens_per_s"], 1e-9), 3)
    result["verified_speedup"] = round(v["tokens_per_s"] / max(a["tokens_per_s"], 1e-9), 3)
    result["forwards_ratio"] = round(a["forwards"] / max(d["forwards"], 1), 3)
    result["tokens_per_forward_ratio"] = round(d["tokens_per_forward"] / max(a["tokens_per_forward"], 1e-9), 3)
    return result


def forward_costs(path: Path, *, device: str = "auto", threads: int | None = None, block_size: int | None = None,
                  history: int = 1024, repeats: int = 30) -> dict:
    """Milliseconds per forward of each kind decoding runs, best of `repeats` rounds of 10 calls (a
    shared machine only ever adds time), after `history` cached tokens (at most half the context),
    and the operators each launches: a one-token step (B = 1), a denoising step over a block of the
    block-diffusion size projecting half its slots, the step that commits a finished block while
    denoising the next (two blocks), and verified decoding's draft and verify steps."""
    from model_worker.backends.clover import CloverBackend

    backend = CloverBackend(path=path, device=device, decoding="diffusion", threads=threads,
                            **({"block_size": block_size} if block_size else {}))
    model, dev = backend.model, next(backend.model.parameters()).device
    b = backend.sampler.block_size
    history = min(history, backend.context // 2) // b * b
    hist = torch.randint(10, model.config.vocab_size, (1, history), generator=torch.Generator().manual_seed(0))
    hist = hist.to(dev)
    vb = block_size or PRESETS["verified"].block_size
    out = {"threads": torch.get_num_threads(), "history": history, "block_size": b, "verified_block_size": vb}
    kinds = (("ar_step", 1, 1, 0, 1), ("block_step", b, b, 0, b // 2), ("commit_step", b, 2 * b, 1, b // 2 + 1))
    for name, bs, q, commit, keep in kinds:
        ms, ops = _time_forward(model, hist, block_size=bs, width=q, commit=commit, keep=keep, repeats=repeats)
        out[name] = {"ms": round(ms, 3), "aten_ops": ops}
    # A round of verified decoding (its own block size): a draft over [newest, B - 1 masks] against history
    # cached at block size 1, then the verifying trial forward at block size 1 over the B tokens, and its
    # accept().
    ms, ops = _time_forward(model, hist, block_size=vb, width=vb, commit=0, keep=vb - 1, repeats=repeats,
                            history_block_size=1)
    out["draft_step"] = {"ms": round(ms, 3), "aten_ops": ops}
    ms, ops = _time_forward(model, hist, block_size=1, width=vb, commit=0, keep=vb, repeats=repeats, trial=True)
    out["verify_step"] = {"ms": round(ms, 3), "aten_ops": ops}
    return out


def slots_report(path: Path, *, device: str = "auto", pages: int, block_size: int | None = None,
                 threshold: float | None = None, threads: int | None = None) -> dict:
    """`model_worker.lab.slots.slot_confidence` on the checkpoint's training pages, at the default decoding
    where a setting is not given."""
    from model_worker.backends.clover import load_checkpoint

    if pages < 1:
        raise ValueError(f"--slots needs at least 1 page, got {pages}")
    if threads:
        torch.set_num_threads(threads)
    tok, model = load_checkpoint(path, device)
    default = PRESETS["diffusion"]
    return slot_confidence(model, corpus_sequences(tok, Path(path), pages),
                           block_size=block_size or default.block_size,
                           threshold=default.threshold if threshold is None else threshold)


def titles_report(path: Path, *, device: str = "auto", pages: int, threads: int | None = None) -> dict:
    """`model_worker.lab.titles.title_choice` on the checkpoint's training pages."""
    from model_worker.backends.clover import load_checkpoint
    from model_worker.lab.titles import title_choice

    if pages < 1:
        raise ValueError(f"--titles needs at least 1 page, got {pages}")
    if threads:
        torch.set_num_threads(threads)
    tok, model = load_checkpoint(path, device)
    return title_choice(model, tok, trained_pages(Path(path), pages))


@torch.inference_mode()
def _time_forward(model, hist, *, block_size: int, width: int, commit: int, keep: int, repeats: int,
                  history_block_size: int | None = None, trial: bool = False) -> tuple[float, int]:
    """Best milliseconds per call of one decode over `width` mask tokens after `hist` (cached at
    `history_block_size`, default `block_size`), and its operators. A `trial` call includes its accept()."""
    from torch.profiler import ProfilerActivity, profile

    dev = hist.device
    cache = model.new_cache(1, hist.shape[1] + 2 * width + 64)
    model.prefill(hist, cache, block_size=history_block_size or block_size)
    ids = torch.full((1, width), model.config.mask_token_id, device=dev)
    kept = torch.arange(keep, device=dev)

    def call():
        model.decode(ids, cache, block_size=block_size, commit=commit, keep=kept, trial=trial)
        if trial:
            model.accept(cache, [width // block_size], block_size=block_size)
            cache.rewind(width)
        cache.rewind(commit * block_size)  # forget the commit: every call sees the same history

    for _ in range(10):
        call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(10):
            call()
        best = min(best, (time.perf_counter() - start) / 10)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        call()
    return best * 1e3, sum(e.count for e in prof.key_averages() if e.key.startswith("aten::"))


def scale_report(args) -> str:
    """`--scale`: the forwards at a model shape (`model_worker.lab.scale`), as JSON or a table."""
    from model_worker.lab import scale

    if not args.random_weights:
        raise ValueError("--scale builds random weights only: pass --random-weights")
    device = "cpu" if args.device == "auto" and not torch.cuda.is_available() else args.device
    device = "cuda" if device == "auto" else device
    try:
        batches = tuple(int(b) for b in args.batches.split(","))
    except ValueError:
        raise ValueError(f"--batches takes comma-separated batch sizes, got {args.batches!r}") from None
    if not batches or min(batches) < 1:
        raise ValueError(f"--batches must be positive, got {args.batches!r}")
    if args.threads:
        torch.set_num_threads(args.threads)
    result = scale.run(args.scale, device=device, layers=args.layers, history=args.history, prefill=args.prefill,
                       batches=batches, repeats=args.repeats, graphs=args.graphs, kernel_choice=args.kernels)
    return json.dumps(result) if args.json else scale.format_text(result)


def format_text(result: dict) -> str:
    d = result["diffusion"]
    lines = [f"checkpoint {result['checkpoint']} on {result['device']} ({result['threads']} threads), "
             f"{len(result['prompt_set'])} prompts; rule {d['rule']} {d['threshold']}, fallback {d['fallback']}"]
    head = f"{'':10} {'tokens':>7} {'forwards':>8} {'tok/fwd':>8} {'fwd/s':>8} {'tok/s':>9} {'first blk s':>11} {'peak MB':>8}"
    lines.append(head)
    for name in ("diffusion", "verified", "ar"):
        r = result[name]
        label = f"{name[:5]} b{r['block_size']}"
        lines.append(f"{label:10} {r['tokens']:>7} {r['forwards']:>8} {r['tokens_per_forward']:>8.2f} "
                     f"{r['forwards_per_s']:>8.1f} {r['tokens_per_s']:>9.1f} {r['first_block_s']:>11.3f} "
                     f"{r['peak_memory_mb']:>8.0f}")
        lines.append(f"{'':10} on topic (title of the asked corpus page): {r['on_topic']}/{r['prompts']}")
        if "same_page_as_ar" in r:
            lines.append(f"{'':10} page identical to ar's: {r['same_page_as_ar']}/{r['prompts']}")
        if "render" in r:
            lines.append(f"{'':10} render check: {r['render']['passed']}/{r['render']['checked']} passed")
    if "end_to_end" in result:
        e = result["end_to_end"]
        lines.append(f"{'app e2e':10} {e['tokens']:>7} {'':>8} {'':>8} {'':>8} {e['tokens_per_s']:>9.1f} "
                     f"{e['first_block_s']:>11.3f}   through the Celery task and the Redis stream: "
                     f"{e['of_engine']:.2f} of the engine's {e['engine_tokens_per_s']:.1f} tok/s timed beside it")
    lines.append(f"speedup (diffusion tok/s over ar tok/s): {result['speedup']:.2f}x")
    lines.append(f"verified speedup (verified tok/s over ar tok/s): {result['verified_speedup']:.2f}x")
    lines.append(f"forwards saved (ar forwards over diffusion forwards): {result['forwards_ratio']:.2f}x")
    lines.append(f"tokens per forward ratio: {result['tokens_per_forward_ratio']:.2f}x")
    return "\n".join(lines)


def _decode_once(backend, request) -> dict:
    """One request decoded by the engine alone (no callbacks): its figures."""
    from model_worker.sampler import generate

    ids = backend.prompt_ids(request)
    cfg = replace(backend.sampler, max_new_tokens=min(backend.sampler.max_new_tokens, backend.context - len(ids)))
    [out] = generate(backend.model, [ids], cfg)
    return {"tokens": out.stats.tokens, "seconds": out.stats.seconds, "first_block_s": out.stats.first_block_s}


def _request(lang: str, question: str, topic: str | None = None):
    from model_worker.contract.pages import PageRequest

    return PageRequest(question=question, lang=lang, topic=topic)


def _reset_peak(backend) -> None:
    if next(backend.model.parameters()).is_cuda:
        torch.cuda.reset_peak_memory_stats()


def _peak_mb(backend) -> float:
    """Peak accelerator memory on CUDA; on CPU the process's peak resident set (it never goes down)."""
    if next(backend.model.parameters()).is_cuda:
        return round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Block diffusion and verified block drafts against block size 1 "
                                                 "on one checkpoint.")
    parser.add_argument("--path", type=Path, default=Path(os.environ.get("MODEL_PATH") or DEFAULT_MODEL_PATH))
    parser.add_argument("--device", default=os.environ.get("MODEL_DEVICE") or "auto")
    parser.add_argument("--prompts", type=int, help=f"how many of the {len(PROMPTS)} fixed prompts (default "
                        f"{DEFAULT_PROMPTS}; with --corpus-questions, of those, default all)")
    parser.add_argument("--corpus-questions", action="store_true",
                        help="ask every corpus page's first training question instead of the fixed prompt set")
    default = PRESETS["diffusion"]
    parser.add_argument("--block-size", type=int, help=f"default {default.block_size}")
    parser.add_argument("--rule", help=f"diffusion's commit rule; default {default.rule}")
    parser.add_argument("--threshold", type=float, help=f"default {default.threshold}")
    parser.add_argument("--fallback", choices=FALLBACKS,
                        help=f"what every step commits at least, and where (SamplerConfig); default {default.fallback}")
    parser.add_argument("--max-new-tokens", type=int)
    parser.add_argument("--render", action="store_true", help="also render-check every page in Chromium")
    parser.add_argument("--end-to-end", action="store_true",
                        help="also write the prompts through the real Celery task and Redis stream (a private "
                             "redis-server and GPU worker), timed as the learner reads them")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--forwards", action="store_true",
                        help="only time one forward of each kind decoding runs (best of 30) and count its operators")
    parser.add_argument("--titles", type=int, metavar="PAGES",
                        help="only measure, on PAGES corpus pages the checkpoint was trained on, whether the model "
                             "prefers the asked page's title after its first training question (model_worker.lab.titles)")
    parser.add_argument("--slots", type=int, metavar="PAGES",
                        help="only measure, per slot of a block, how often the first denoising step is right and "
                             "sure on PAGES corpus pages the checkpoint was trained on (model_worker.lab.slots)")
    parser.add_argument("--continuous", type=int, metavar="PAGES",
                        help="ask for the first PAGES fixed prompts at once: one by one, then in one shared batch")
    parser.add_argument("--scale", help="time the forwards at a model shape with random weights instead "
                        "(clover-35b-a3b, tiny-moe; model_worker.lab.scale)")
    parser.add_argument("--random-weights", action="store_true", help="with --scale: the only weights it builds")
    parser.add_argument("--layers", type=int, help="with --scale: build only N layers (ms also scaled to full depth)")
    parser.add_argument("--history", type=int, default=1024, help="with --scale: cached tokens before each forward")
    parser.add_argument("--prefill", type=int, default=4096, help="with --scale: prompt tokens of the prefill item")
    parser.add_argument("--batches", default="1,8", help="with --scale: batch sizes, comma separated")
    parser.add_argument("--repeats", type=int, default=5, help="with --scale: timed calls per item (median)")
    parser.add_argument("--graphs", action="store_true", help="with --scale: also the decoding items as captured "
                        "forwards (CUDA graphs on CUDA, their static forms elsewhere)")
    parser.add_argument("--kernels", default="auto", choices=("auto", "torch", "fla"),
                        help="with --scale: the prefill's delta-rule kernels (model_worker.clover.kernels); "
                        "auto: fla on CUDA where installed. With fla the prefill is also timed on plain torch")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        if args.scale is not None:
            print(scale_report(args))
            return
        if args.titles is not None:
            print(json.dumps(titles_report(args.path, device=args.device, pages=args.titles, threads=args.threads),
                             ensure_ascii=False))
            return
        if args.slots is not None:
            result = slots_report(args.path, device=args.device, pages=args.slots, block_size=args.block_size,
                                  threshold=args.threshold, threads=args.threads)
            print(json.dumps(result) if args.json else format_slots(result))
            return
        if args.continuous is not None:
            from model_worker.lab.continuous import continuous_report

            requests = [_request(lang, q, slug) for lang, q, slug in PROMPTS[: args.continuous]]
            result = continuous_report(args.path, requests, device=args.device, threads=args.threads,
                                       max_new_tokens=args.max_new_tokens)
            print(json.dumps(result))
            return
        if args.forwards:
            costs = forward_costs(args.path, device=args.device, threads=args.threads, block_size=args.block_size)
            print(json.dumps(costs) if args.json else "\n".join(
                f"{k:12} {v['ms']:8.2f} ms {v['aten_ops']:6} operators" for k, v in costs.items() if isinstance(v, dict)))
            return
        prompts = args.prompts or (len(corpus_prompts()) if args.corpus_questions else DEFAULT_PROMPTS)
        result = bench(args.path, device=args.device, prompts=prompts, render=args.render,
                       corpus=args.corpus_questions, end_to_end=args.end_to_end,
                       block_size=args.block_size, rule=args.rule, threshold=args.threshold,
                       fallback=args.fallback, max_new_tokens=args.max_new_tokens, threads=args.threads)
    except (FileNotFoundError, ValueError) as exc:
        sys.exit(f"bench: {exc}")
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, ensure_ascii=False) if args.json else format_text(result))


if __name__ == "__main__":
    main()

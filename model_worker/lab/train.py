"""Train a Clover checkpoint on the page corpus with the block-diffusion objective.

`python -m model_worker.lab.train --preset demo --out model_worker/checkpoints/clover-demo`

Every step draws one block size from the trained set (1 included), so the same checkpoint decodes
by block diffusion and autoregressively. Each step's randomness is derived from (seed, step) alone,
which makes a resumed run continue exactly where the interrupted one stopped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch

from model_worker.clover.prompt import build_prompt, page_target
from model_worker.clover.tokenizer import DEFAULT_VOCAB_SIZE, load_tokenizer, special_ids, train_tokenizer
from model_worker.config import REPO_ROOT, default_threads
from model_worker.corpus import Page, load_pages
from model_worker.lab.objective import block_diffusion_loss
from model_worker.lab.tokenizer import tokenizer_texts

STATE_FILE = "train_state.pt"
TIMED_STEPS = 10  # steps a `--minutes` run times before it sets its step count


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 320
    batch_size: int = 1
    lr: float = 3e-3
    min_lr_ratio: float = 0.05
    warmup: int = 20
    weight_decay: float = 0.05
    grad_clip: float = 1.0
    block_sizes: tuple[int, ...] = (1, 8, 16, 32)
    # Block size 1 is drawn less often (the demo's first runs, when its GDN pass ran token by token; it now
    # runs in 64-token chunks and one stream, about 0.6x a wide block's step).
    block_weights: tuple[float, ...] = (0.1, 0.25, 0.25, 0.4)
    # Share of blocks masked from a random cut to the end instead of at random: what the prefix
    # fallback decodes from. 0 keeps the plain BD3-LM objective.
    suffix_mask_rate: float = 0.0
    # Share of steps that train on the prompt and only the first `head_tokens` page tokens: the page's
    # opening, where its <title> (its topic) is written. Such steps are short, so cheap.
    head_rate: float = 0.0
    head_tokens: int = 96
    # Block-size weights of head steps (None: `block_weights`). Head steps are short, so block size 1,
    # where the title is chosen one token at a time, costs little there.
    head_block_weights: tuple[float, ...] | None = None
    # Share of steps at a block size above 1 whose clean history runs at block size 1, as verified
    # decoding caches it: the noisy blocks learn to draft from the autoregressive model's history.
    causal_history_rate: float = 0.0
    # Share of blocks, in causal-history steps, masked everywhere but their first token: the window a
    # verified-decoding round drafts (its newest token, then masks).
    draft_mask_rate: float = 0.0
    context: int = 2560               # max_position_embeddings of the checkpoint
    previous_budget: int = 128        # tokens of a previous page kept in follow-up prompts
    followup_rate: float = 0.15       # share of examples that are follow-ups
    # Examples per page that pair its topic with questions of other pages: the router picks the topic,
    # so the page must follow the topic line whatever words the learner used.
    foreign_questions: int = 4
    vocab_size: int = DEFAULT_VOCAB_SIZE
    save_every: int = 20
    seed: int = 0
    # Overrides on top of CloverConfig.preset(model_preset): a narrow demo model (about 1.1M parameters),
    # sized so a full run fits in half an hour on two shared CPU cores.
    model: dict = field(default_factory=lambda: dict(
        hidden_size=128, intermediate_size=384, num_hidden_layers=4, num_attention_heads=2,
        num_key_value_heads=1, head_dim=64, linear_num_key_heads=2, linear_num_value_heads=2,
        linear_key_head_dim=32, linear_value_head_dim=32,
    ))
    model_preset: str = "demo"

    def __post_init__(self):
        if len(self.block_weights) != len(self.block_sizes):
            raise ValueError("block_weights needs one weight per block size")
        if self.head_block_weights is not None and len(self.head_block_weights) != len(self.block_sizes):
            raise ValueError("head_block_weights needs one weight per block size")
        if not 0.0 <= self.head_rate <= 1.0 or self.head_tokens < 1:
            raise ValueError(f"head_rate must be in [0, 1] and head_tokens >= 1, got {self.head_rate}, {self.head_tokens}")
        if not 0.0 <= self.suffix_mask_rate <= 1.0:
            raise ValueError(f"suffix_mask_rate must be in [0, 1], got {self.suffix_mask_rate}")
        if not 0.0 <= self.causal_history_rate <= 1.0:
            raise ValueError(f"causal_history_rate must be in [0, 1], got {self.causal_history_rate}")
        if not 0.0 <= self.draft_mask_rate <= 1.0:
            raise ValueError(f"draft_mask_rate must be in [0, 1], got {self.draft_mask_rate}")
        if 1 not in self.block_sizes:
            raise ValueError("block size 1 must be trained so the checkpoint also decodes autoregressively")


PRESETS: dict[str, TrainConfig] = {
    "demo": TrainConfig(),
    # The whole grown library (160 pages, up to about 9,500 tokens with their prompts) from scratch: a
    # wider model (about 4.2M parameters, a verify forward about 1.2x the demo shape's on a CPU core) and
    # a batch of pages a step. Sized for a GPU (`--device cuda`); `--minutes` fits the schedule to a budget.
    "library": TrainConfig(
        # The demo checkpoint's later runs in one: drafting from a causal history, and the topic line
        # (its title at the page's head) learned on short head steps (docs/model.md, Training).
        steps=4000, batch_size=16, lr=2e-3, warmup=50, context=10240, save_every=200,
        block_weights=(0.15, 0.1, 0.15, 0.6), causal_history_rate=0.5, draft_mask_rate=0.5,
        head_rate=0.15, head_tokens=96, head_block_weights=(0.7, 0.1, 0.1, 0.1), foreign_questions=4,
        model=dict(hidden_size=256, intermediate_size=768, num_hidden_layers=4, num_attention_heads=4,
                   num_key_value_heads=1, head_dim=64, linear_num_key_heads=4, linear_num_value_heads=4,
                   linear_key_head_dim=32, linear_value_head_dim=32),
    ),
    # Seconds on a CPU: for tests and smoke runs.
    "tiny": TrainConfig(
        steps=20, batch_size=2, lr=3e-3, warmup=2, block_sizes=(1, 4, 8), block_weights=(1, 1, 1),
        context=512, previous_budget=32, vocab_size=400, save_every=10, model_preset="tiny",
        model={"hidden_size": 32, "intermediate_size": 64},
    ),
}


# ---------------------------------------------------------------------------------------------- data

@dataclass(frozen=True)
class Example:
    ids: list[int]
    prompt_len: int
    slug: str = ""  # the page it teaches


def build_examples(tok, pages: list[Page], cfg: TrainConfig, log=print) -> tuple[list[Example], list[Example]]:
    """Direct examples (question -> page) and follow-ups (previous page + question -> page).

    A page too long for the context is left out with a warning; if none fits, a ValueError says so.
    """
    direct, followups, too_long = [], [], {}
    for i, page in enumerate(pages):
        target = page_target(tok, page.html)
        previous_head = _head(tok, pages[(i + 1) % len(pages)].html, cfg.previous_budget)  # the follow-ups' page before
        for lang, question in page.questions + _foreign_questions(pages, i, cfg.foreign_questions):
            for bucket, previous in ((direct, None), (followups, previous_head)):
                prompt = build_prompt(tok, question=question, lang=lang, previous_page=previous, topic=page.slug)
                if len(prompt) + len(target) > cfg.context:
                    too_long[page.slug] = max(too_long.get(page.slug, 0), len(prompt) + len(target))
                    continue
                bucket.append(Example(ids=prompt + target, prompt_len=len(prompt), slug=page.slug))
    for slug, need in too_long.items():
        log(f"warning: page {slug!r} needs {need} tokens with its prompt, more than the training context "
            f"of {cfg.context}; its longer examples are left out")
    if not direct:
        raise ValueError(f"no page fits the training context of {cfg.context} tokens: raise the context")
    return direct, followups


def _foreign_questions(pages: list[Page], i: int, count: int) -> tuple[tuple[str, str], ...]:
    """`count` questions of other pages, the same ones on every run (a page's neighbours at a stride)."""
    others = [pages[(i + k * 7 + 1) % len(pages)] for k in range(len(pages))]
    picked = [q for page in others if page is not pages[i] for q in page.questions[:1]]
    return tuple(picked[:count])


def _head(tok, html: str, budget: int) -> str:
    ids = tok.encode(html, add_special_tokens=False)[:budget]
    return tok.decode(ids)


def collate(batch: list[Example], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad to the longest example; only page tokens (and EOS) are maskable."""
    length = max(len(e.ids) for e in batch)
    input_ids = torch.full((len(batch), length), pad_id, dtype=torch.long)
    maskable = torch.zeros((len(batch), length), dtype=torch.bool)
    for row, e in enumerate(batch):
        input_ids[row, : len(e.ids)] = torch.tensor(e.ids)
        maskable[row, e.prompt_len : len(e.ids)] = True
    return input_ids, maskable


# ------------------------------------------------------------------------------------------ training

def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warmup, then cosine decay to `min_lr_ratio` of the peak."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def step_batch(step: int, cfg: TrainConfig, direct: list[Example], followups: list[Example]):
    """The examples, block size and mask generator of one step, from (seed, step) alone."""
    rng = random.Random(cfg.seed * 1_000_003 + step)
    batch = [
        rng.choice(followups) if followups and rng.random() < cfg.followup_rate else rng.choice(direct)
        for _ in range(cfg.batch_size)
    ]
    block_size = rng.choices(cfg.block_sizes, weights=cfg.block_weights)[0]
    if cfg.head_rate > 0 and rng.random() < cfg.head_rate:  # only the page's head: where its topic is set
        batch = [Example(ids=e.ids[: e.prompt_len + cfg.head_tokens], prompt_len=e.prompt_len) for e in batch]
        if cfg.head_block_weights is not None:
            block_size = rng.choices(cfg.block_sizes, weights=cfg.head_block_weights)[0]
    generator = torch.Generator().manual_seed(cfg.seed * 1_000_003 + step)
    return batch, block_size, generator


def causal_history_at(step: int, cfg: TrainConfig, block_size: int) -> bool:
    """Whether this step's clean history runs at block size 1, from (seed, step) alone."""
    if block_size == 1 or cfg.causal_history_rate == 0:
        return False
    return random.Random(f"{cfg.seed}:{step}:history").random() < cfg.causal_history_rate


def make_model(tok, cfg: TrainConfig):
    from model_worker.clover import CloverConfig, CloverForBlockDiffusion

    ids = special_ids(tok)
    config = CloverConfig.preset(
        cfg.model_preset,
        **{
            **cfg.model,
            "vocab_size": len(tok),
            "mask_token_id": ids["mask"],
            "eos_token_id": ids["eos"],
            "pad_token_id": ids["pad"],
            "max_position_embeddings": cfg.context,
            "trained_block_sizes": list(cfg.block_sizes),
        },
    )
    torch.manual_seed(cfg.seed)
    return CloverForBlockDiffusion(config)


def train(cfg: TrainConfig, out: Path, *, resume: bool = False, pages: list[Page] | None = None,
          stop_after: int | None = None, progress: bool = True, log=print, extend_to: int | None = None,
          init_from: Path | None = None, all_pages: bool = False, device: str = "cpu",
          minutes: float | None = None) -> dict:
    """Train (or resume) into `out`; returns a summary with every step's loss.

    A resumed run keeps the saved config; `extend_to` raises its step count (the cosine tail is then
    stretched over the new total, so the run no longer matches a fresh one of that length).
    `init_from`: a checkpoint folder to start a new run from (its weights, tokenizer and pages, a fresh
    optimizer and schedule); ignored when resuming a run that has saved state. `all_pages`: with
    `init_from`, train on the whole corpus as it stands instead of the checkpoint's pages.
    """
    from tqdm import tqdm

    device = torch.device(device)
    out.mkdir(parents=True, exist_ok=True)
    state_path = out / STATE_FILE
    state = None
    if resume and state_path.is_file():
        state = torch.load(state_path, map_location="cpu", weights_only=False)
        cfg = _config_from_dict(state["config"])
        if extend_to is not None and extend_to > cfg.steps:
            cfg = replace(cfg, steps=extend_to)
        log(f"resuming from step {state['step']} of {cfg.steps} in {out}")
    if state is not None:
        init_from = None
    init_pages = _checkpoint_pages(init_from) if init_from is not None and not all_pages else None
    pages = pages if pages is not None else load_pages()
    if not pages:
        raise FileNotFoundError("no exemplar pages in the corpus")
    keep = state.get("pages") if state is not None else init_pages
    if keep:
        # A resumed or continued run keeps its data even if the corpus has grown since it started.
        pages = [p for p in pages if p.slug in set(keep)]

    if init_from is not None:
        tok = load_tokenizer(init_from)
        tok.save_pretrained(str(out))
        log(f"starting from the checkpoint in {init_from}")
    elif state is not None or (out / "tokenizer.json").is_file():
        tok = load_tokenizer(out)
    else:
        tok = train_tokenizer(tokenizer_texts(pages), vocab_size=cfg.vocab_size)
        tok.save_pretrained(str(out))
    if init_from is not None:
        cfg = replace(cfg, context=max(cfg.context, _checkpoint_context(init_from)))
    direct, followups = build_examples(tok, pages, cfg, log=log)

    if init_from is not None:
        from model_worker.clover import CloverForBlockDiffusion

        model = CloverForBlockDiffusion.from_pretrained(str(init_from)).float()
        if set(model.config.trained_block_sizes) != set(cfg.block_sizes):
            raise ValueError(f"{init_from} was trained for block sizes {list(model.config.trained_block_sizes)}, "
                             f"this run for {list(cfg.block_sizes)}")
        # The context can grow (--context, never below the checkpoint's: set above): positions are
        # rotary, so no weight depends on it; the rotary table is built from the config on first use.
        model.config.max_position_embeddings = cfg.context
        model.model._rope.clear()
        cfg = replace(cfg, model={k: getattr(model.config, k) for k in cfg.model})
    else:
        model = make_model(tok, cfg)
    model.to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "embed" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "embed" not in n)]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr, betas=(0.9, 0.95),
    )
    start, losses = 0, []
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])  # moved to the parameters' device
        torch.set_rng_state(state["torch_rng"])
        start, losses = state["step"], state["losses"]

    pad_id = special_ids(tok)["pad"]
    end = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    model.train()
    bar = tqdm(initial=start, total=cfg.steps, disable=not progress, desc="train", mininterval=2.0)
    t0 = time.perf_counter()
    # A time budget sets the step count after TIMED_STEPS steps, timed from the end of the first (which
    # also pays for allocations and kernel set-up), and stops the run when it is spent.
    timed = min(end, start + TIMED_STEPS)
    first_done = None
    step = start
    while step < end:
        batch, block_size, generator = step_batch(step, cfg, direct, followups)
        input_ids, maskable = collate(batch, pad_id)
        input_ids, maskable = input_ids.to(device), maskable.to(device)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, cfg)
        causal = causal_history_at(step, cfg, block_size)
        loss = block_diffusion_loss(model, input_ids, block_size=block_size, maskable=maskable,
                                    generator=generator, suffix_rate=cfg.suffix_mask_rate,
                                    causal_history=causal, draft_rate=cfg.draft_mask_rate if causal else 0.0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        value = float(loss.detach())
        losses.append(round(value, 5))
        bar.set_postfix(loss=f"{value:.3f}", block=block_size)
        bar.update()
        done = step = step + 1
        if done == start + 1:
            first_done = time.perf_counter()
        if minutes is not None and done == timed:
            now = time.perf_counter()
            per_step = (now - first_done) / max(1, done - start - 1) if done > start + 1 else now - t0
            steps = fit_steps(done, per_step, minutes * 60 - (now - t0))
            cfg = replace(cfg, steps=steps)
            end = steps if stop_after is None else min(steps, stop_after)
            bar.total = steps
            log(f"{minutes:g} minutes fit {steps} steps ({per_step:.3f} s a step)")
        elif minutes is not None and done < end and time.perf_counter() - t0 > minutes * 60:
            log(f"the {minutes:g} minutes are spent at step {done} of {end}: saving and stopping")
            end = done
        if done % cfg.save_every == 0 or done == end:
            # writable_pages: the pages whose direct examples fit the context, the ones the checkpoint writes
            _save(out, model, optimizer, tok, cfg, done, losses, [p.slug for p in pages],
                  sorted({e.slug for e in direct}))
            if not progress:
                log(f"step {done}/{cfg.steps} loss {_mean(losses[-cfg.save_every:]):.4f} "
                    f"({time.perf_counter() - t0:.0f}s)")
    bar.close()
    return {"step": end, "losses": losses, "seconds": time.perf_counter() - t0}


def fit_steps(done: int, per_step: float, left: float) -> int:
    """The step count that ends a run `left` seconds from now, `done` steps in, at `per_step` seconds a
    step, keeping 5% for the saves; never below `done`. The later steps are timed by the first ones:
    block sizes and pages are drawn at random, so their mix evens out."""
    return done + max(0, int(left * 0.95 / per_step))


def _checkpoint_context(folder: Path) -> int:
    return int(json.loads((folder / "config.json").read_text())["max_position_embeddings"])


def _checkpoint_pages(folder: Path) -> list[str] | None:
    """The pages a checkpoint was trained on, from its training.json (None if it does not say)."""
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"no checkpoint to start from in {folder}: config.json is missing")
    record = folder / "training.json"
    return json.loads(record.read_text()).get("pages") if record.is_file() else None


def _mean(xs: list[float]) -> float:
    return sum(xs) / max(1, len(xs))


def _save(out: Path, model, optimizer, tok, cfg: TrainConfig, step: int, losses: list[float],
          slugs: list[str], writable: list[str]) -> None:
    """Write the resumable state, then the loadable checkpoint; each file is replaced atomically."""
    tmp = out / (STATE_FILE + ".tmp")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                "losses": losses, "torch_rng": torch.get_rng_state(), "config": _config_to_dict(cfg),
                "pages": slugs}, tmp)
    os.replace(tmp, out / STATE_FILE)
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    (out / "training.json").write_text(json.dumps(
        {"step": step, "config": _config_to_dict(cfg), "loss_last_50": _mean(losses[-50:]), "pages": slugs,
         "writable_pages": writable},
        indent=2, ensure_ascii=False) + "\n")


def _config_to_dict(cfg: TrainConfig) -> dict:
    d = asdict(cfg)
    d["block_sizes"] = list(cfg.block_sizes)
    d["block_weights"] = list(cfg.block_weights)
    if cfg.head_block_weights is not None:
        d["head_block_weights"] = list(cfg.head_block_weights)
    return d


def _config_from_dict(d: dict) -> TrainConfig:
    head = d.get("head_block_weights")
    return TrainConfig(**{**d, "block_sizes": tuple(d["block_sizes"]), "block_weights": tuple(d["block_weights"]),
                          "head_block_weights": tuple(head) if head is not None else None})


def export(src: Path, dest: Path, *, dtype: str = "float32") -> None:
    """Copy a trained checkpoint without its optimizer state, weights cast to `dtype`."""
    from model_worker.clover import CloverForBlockDiffusion

    model = CloverForBlockDiffusion.from_pretrained(str(src))
    model.to(getattr(torch, dtype)).save_pretrained(str(dest))
    load_tokenizer(src).save_pretrained(str(dest))
    if (src / "training.json").is_file():
        (dest / "training.json").write_text((src / "training.json").read_text())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train a Clover page model with block diffusion.")
    parser.add_argument("--preset", default="demo", choices=sorted(PRESETS))
    parser.add_argument("--steps", type=int)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--save-every", type=int)
    parser.add_argument("--block-weights", type=float, nargs="+",
                        help="how often each trained block size is drawn, in the preset's block-size order")
    parser.add_argument("--head-rate", type=float,
                        help="share of steps trained on the prompt and only the page's first --head-tokens tokens")
    parser.add_argument("--head-tokens", type=int)
    parser.add_argument("--head-block-weights", type=float, nargs="+",
                        help="how often each block size is drawn on head steps (default: --block-weights)")
    parser.add_argument("--suffix-mask-rate", type=float,
                        help="share of blocks masked from a random cut to their end (prefix-fallback decoding)")
    parser.add_argument("--causal-history-rate", type=float,
                        help="share of steps at block sizes above 1 whose history runs at block size 1, "
                             "the history verified decoding drafts from")
    parser.add_argument("--draft-mask-rate", type=float,
                        help="share of blocks in causal-history steps masked but for their first token "
                             "(the window verified decoding drafts)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "var" / "train" / "clover-demo")
    parser.add_argument("--resume", action="store_true",
                        help="continue from the state saved in --out (with --steps: train on to that step)")
    parser.add_argument("--init-from", type=Path,
                        help="start a new run from this checkpoint's weights, tokenizer and pages")
    parser.add_argument("--all-pages", action="store_true",
                        help="with --init-from: train on every corpus page, not only the checkpoint's")
    parser.add_argument("--foreign-questions", type=int,
                        help="examples per page that pair its topic with other pages' questions")
    parser.add_argument("--context", type=int,
                        help="training context in tokens; with --init-from it can grow the checkpoint's "
                             "(rotary positions: no weight depends on it), never shrink it")
    parser.add_argument("--export", type=Path, help="after training, write a copy without optimizer state here")
    parser.add_argument("--device", default="cpu",
                        help="where to train: cpu, cuda or cuda:N (the saved state loads on either)")
    parser.add_argument("--minutes", type=float,
                        help="a wall-clock budget: after the warmup, the step count is set to what fits it")
    parser.add_argument("--threads", type=int, default=default_threads(),
                        help="torch threads (default: the cores not already busy, at least 1)")
    parser.add_argument("--no-progress", action="store_true", help="log lines instead of a progress bar")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    device = _training_device(parser, args.device)
    overrides = {k: v for k, v in {"steps": args.steps, "batch_size": args.batch_size, "lr": args.lr,
                                   "seed": args.seed, "save_every": args.save_every,
                                   "block_weights": tuple(args.block_weights) if args.block_weights else None,
                                   "suffix_mask_rate": args.suffix_mask_rate, "head_rate": args.head_rate,
                                   "head_tokens": args.head_tokens, "causal_history_rate": args.causal_history_rate,
                                   "draft_mask_rate": args.draft_mask_rate,
                                   "foreign_questions": args.foreign_questions, "context": args.context,
                                   "head_block_weights": tuple(args.head_block_weights)
                                   if args.head_block_weights else None}.items() if v is not None}
    cfg = replace(PRESETS[args.preset], **overrides)
    summary = train(cfg, args.out, resume=args.resume, progress=not args.no_progress,
                    extend_to=args.steps if args.resume else None, init_from=args.init_from,
                    all_pages=args.all_pages, device=device, minutes=args.minutes)
    print(f"trained to step {summary['step']} in {summary['seconds']:.0f}s; "
          f"last loss {_mean(summary['losses'][-50:]):.4f}; checkpoint in {args.out}")
    if args.export:
        export(args.out, args.export)
        print(f"exported to {args.export}")


def _training_device(parser: argparse.ArgumentParser, name: str) -> str:
    """The device to train on, or a usage error naming what is missing."""
    try:
        device = torch.device(name)
    except RuntimeError:
        parser.error(f"--device {name!r} is not a device: use cpu, cuda or cuda:N")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            parser.error(f"--device {name}: this PyTorch sees no CUDA GPU (torch {torch.__version__})")
        torch.backends.cuda.matmul.allow_tf32 = True  # fp32 weights and optimizer; TF32 matmuls
        torch.backends.cudnn.allow_tf32 = True
    elif device.type != "cpu":
        parser.error(f"--device {name}: training runs on cpu or cuda")
    return str(device)


if __name__ == "__main__":
    main()

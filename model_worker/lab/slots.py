"""How far into a block the model is right, and how far it is sure: the ceiling on tokens per forward.

On text the checkpoint was trained on, teacher-forced block by block: after the true history, the
block's first denoising step (every slot masked) predicts each slot j. Per slot this measures the
accuracy of the top-1 token and the share of blocks where its probability clears the threshold,
with and without being right. Two run lengths summarise it:
- `first_step_run`: what the threshold rule with the prefix fallback commits in that step (the run of
  sure slots from slot 0, at least one);
- `correct_run`: the run of right slots from slot 0, what a model as sure as it is right could commit.
A gap between them means tokens per forward is held back by confidence, not by accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from model_worker.sampler import SamplerConfig, check_trained
from model_worker.sampler.loop import check_prompts


def trained_pages(checkpoint: Path, limit: int | None = None) -> list:
    """The first `limit` corpus pages the checkpoint was trained on (all pages if its training.json does
    not say)."""
    from model_worker.corpus import load_pages

    record = checkpoint / "training.json"
    trained = json.loads(record.read_text()).get("pages") if record.is_file() else None
    return [p for p in load_pages() if trained is None or p.slug in trained][:limit]


def corpus_sequences(tok, checkpoint: Path, limit: int) -> list[tuple[int, list[int]]]:
    """`trained_pages`, each after the prompt of its first training question."""
    from model_worker.clover.prompt import build_prompt, page_target

    out = []
    for page in trained_pages(checkpoint, limit):
        lang, question = page.questions[0]
        prompt = build_prompt(tok, question=question, lang=lang)
        out.append((len(prompt), prompt + page_target(tok, page.html)))
    return out


@torch.inference_mode()
def slot_confidence(model, sequences: list[tuple[int, list[int]]], *, block_size: int, threshold: float) -> dict:
    """sequences: (prompt length, prompt + target ids). Every whole block after the prompt is measured."""
    b = block_size
    check_trained(SamplerConfig(block_size=b), model.config.trained_block_sizes)
    check_prompts(model, [ids[:n] for n, ids in sequences])
    mask_id = model.config.mask_token_id
    right = torch.zeros(b)
    sure_right = torch.zeros(b)
    sure_wrong = torch.zeros(b)
    runs, correct_runs, blocks, run_errors = 0, 0, 0, 0
    for prompt_len, ids in sequences:
        ids = ids[: model.config.max_position_embeddings]
        start = -(-prompt_len // b) * b  # the first block holding no prompt token
        if start + b > len(ids):
            continue
        tokens = torch.tensor(ids, device=model.device)[None]
        cache = model.new_cache(1, len(ids) + b)
        head = model.prefill(tokens[:, :start], cache, block_size=b)  # (1, V): slot 0 of the next block
        masks = torch.full((1, b), mask_id, device=model.device)
        for k in range(start, len(ids) - b + 1, b):
            inside = model.decode(masks, cache, block_size=b, keep=slice(0, b - 1)) if b > 1 else None
            logits = head if inside is None else torch.cat([head, inside[0]])
            logits[:, mask_id] = float("-inf")
            conf, pred = logits.softmax(-1).max(-1)
            ok = (pred == tokens[0, k : k + b]).cpu()
            sure = (conf >= threshold).cpu()
            right += ok
            sure_right += sure & ok
            sure_wrong += sure & ~ok
            run = max(_leading(sure), 1)
            runs += run
            run_errors += int((~ok[:run]).sum())
            correct_runs += _leading(ok)
            blocks += 1
            head = model.decode(tokens[:, k : k + b], cache, block_size=b, commit=1, keep=slice(-1, None))[:, -1]
    if not blocks:
        raise ValueError(f"no sequence holds a whole block of {b} tokens after its prompt")
    share = lambda x: [round(v, 3) for v in (x / blocks).tolist()]  # noqa: E731
    return {
        "block_size": b, "threshold": threshold, "blocks": blocks,
        "accuracy": share(right), "sure_and_right": share(sure_right), "sure_and_wrong": share(sure_wrong),
        "first_step_run": round(runs / blocks, 2), "first_step_errors": run_errors,
        "correct_run": round(correct_runs / blocks, 2),
    }


def _leading(flags: torch.Tensor) -> int:
    """Length of the run of True from the start."""
    return int(flags.long().cumprod(0).sum())


def format_slots(result: dict) -> str:
    lines = [f"{result['blocks']} blocks of {result['block_size']}, first denoising step (every slot masked), "
             f"threshold {result['threshold']}",
             f"{'slot':>4} {'right':>6} {'sure+right':>10} {'sure+wrong':>10}"]
    for j, (a, s, w) in enumerate(zip(result["accuracy"], result["sure_and_right"], result["sure_and_wrong"],
                                      strict=True)):
        lines.append(f"{j:>4} {a:>6.3f} {s:>10.3f} {w:>10.3f}")
    lines.append(f"first step commits {result['first_step_run']:.2f} tokens per block "
                 f"({result['first_step_errors']} wrong in all); the right run from slot 0 is "
                 f"{result['correct_run']:.2f} tokens")
    return "\n".join(lines)

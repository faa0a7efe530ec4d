"""Does the model read the question? Which page title it prefers, teacher-forced.

A page's topic is settled by its `<title>`, a few tokens after an opening most pages share. For each
page, after the prompt of its first training question and the page's opening up to `<title>`, every
corpus title written after that same opening is scored by its log-probability at block size 1. A
model that reads the question prefers the asked page's own title.
"""

from __future__ import annotations

import torch


@torch.inference_mode()
def title_choice(model, tok, pages) -> dict:
    """pages: corpus pages (slug, html, questions). Returns how many prefer their own title, and each
    page's preferred one with its log-probability."""
    from model_worker.clover.prompt import _encode, build_prompt

    parts = {p.slug: _split(p.html) for p in pages}
    choices = {}
    for page in pages:
        opening, _ = parts[page.slug]
        lang, question = page.questions[0]
        head = build_prompt(tok, question=question, lang=lang) + _encode(tok, opening)
        scores = {}
        for slug, (other_opening, title) in parts.items():
            if other_opening != opening:
                continue
            title_ids = _encode(tok, opening + title)[len(_encode(tok, opening)):]
            logp = model(torch.tensor([head + title_ids], device=model.device), block_size=1).logits[0].float()
            logp = logp.log_softmax(-1)
            scores[slug] = sum(logp[len(head) - 1 + i, t].item() for i, t in enumerate(title_ids))
        best = max(scores, key=scores.get)
        choices[page.slug] = {"preferred": best, "logprob": round(scores[best], 3),
                              "own_logprob": round(scores[page.slug], 3), "candidates": len(scores)}
    return {"pages": len(pages), "own_title_preferred": sum(c["preferred"] == s for s, c in choices.items()),
            "choices": choices}


def _split(html: str) -> tuple[str, str]:
    """(the page up to and including `<title>`, the title text)."""
    html = html.strip()
    start = html.index("<title>") + len("<title>")
    return html[:start], html[start : html.index("</title>")]

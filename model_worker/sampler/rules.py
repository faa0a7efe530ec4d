"""Commit rules: which masked positions of a block take their prediction this step.

The threshold rule takes every candidate position at or above it; the others rank the candidates by a
key and take the first n of each row. The fallback then guarantees progress (n >= 1 while a row has a
candidate); all of it is batched tensor code, no loop over tokens.
"""

from __future__ import annotations

import torch

from .config import SamplerConfig


def predict(
    logits: torch.Tensor, temperature: float, generators: list[torch.Generator] | None, rows: torch.Tensor,
    *, scores: bool = True, entropy: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """Tokens, their probabilities and entropies (K,) from logits (K, V) of K masked positions.

    Greedy at temperature 0; otherwise Gumbel-max sampling from logits / temperature. `rows` (K,) says
    which sequence each position belongs to: each sequence draws from its own generator, so its
    samples do not depend on the batch it runs in. Without `scores` only the tokens are computed;
    without `entropy` the entropies are None (only the entropy rule reads them).
    """
    scaled = logits if temperature == 0 else logits / temperature
    if temperature == 0:
        tokens = scaled.argmax(-1)
    else:
        noise = torch.empty_like(scaled)
        for r in rows.unique().tolist():  # one draw per sequence, not per token
            at = (rows == r).nonzero().flatten()
            g = generators[r]
            u = torch.rand((len(at), scaled.shape[-1]), generator=g, device=g.device).to(scaled.device)
            noise[at] = -torch.log(-torch.log(u.clamp_min(1e-20)))
        tokens = (scaled + noise).argmax(-1)
    if not scores:
        return tokens, None, None
    if not entropy:  # p(token) = exp(logit - logsumexp): no full softmax over the vocabulary
        conf = (scaled.gather(-1, tokens[:, None]).squeeze(-1) - scaled.logsumexp(-1)).exp()
        return tokens, conf, None
    logp = torch.log_softmax(scaled, -1)
    conf = logp.gather(-1, tokens[:, None]).squeeze(-1).exp()
    return tokens, conf, -(logp.exp() * logp).nan_to_num().sum(-1)


def select(cfg: SamplerConfig, conf: torch.Tensor, entropy: torch.Tensor | None, candidates: torch.Tensor) -> torch.Tensor:
    """Bool (N, B): positions to commit now, only among `candidates` (`entropy` only for the entropy rule)."""
    if cfg.rule == "threshold":  # a set, not a ranking: no sort
        take = candidates & (conf >= cfg.threshold)
        if cfg.fallback == "confident":  # a row with no pick still commits its most confident slot
            best = torch.where(candidates, conf, torch.finfo(conf.dtype).min).argmax(-1, keepdim=True)
            top = torch.zeros_like(candidates).scatter_(-1, best, True) & candidates
            return take | (top & ~take.any(-1, keepdim=True))
    else:
        take = _ranked(cfg, conf, entropy, candidates)
        if cfg.fallback == "confident":
            return take
    if cfg.fallback == "prefix":  # keep the run of picks from the leftmost candidate on; others wait
        take = candidates & (take | ~candidates).long().cumprod(-1).bool()
    return take | (candidates & (candidates.long().cumsum(-1) == 1))  # and the leftmost candidate


def _ranked(cfg: SamplerConfig, conf, entropy, candidates) -> torch.Tensor:
    """The first n candidates of each row by the rule's key, n as the rule says (at least one with the
    confident fallback)."""
    neg = torch.finfo(conf.dtype).min
    key = -entropy if cfg.rule == "entropy" else conf
    order = torch.where(candidates, key, neg).argsort(dim=-1, descending=True, stable=True)
    sorted_cand = candidates.gather(-1, order)
    if cfg.rule == "factor":
        c = conf.gather(-1, order)
        rank = torch.arange(1, conf.shape[-1] + 1, device=conf.device)
        n = (sorted_cand & ((rank + 1) * (1 - c) < cfg.factor)).cumprod(-1).sum(-1)
    elif cfg.rule == "entropy":
        e = torch.where(sorted_cand, entropy.gather(-1, order), 0.0)
        n = (sorted_cand & (e.cumsum(-1) - e <= cfg.entropy_bound)).cumprod(-1).sum(-1)
    else:  # topk
        n = torch.full_like(candidates[:, 0], cfg.k, dtype=torch.long)
    n = torch.minimum(n.clamp_min(1) if cfg.fallback == "confident" else n, candidates.sum(-1))
    ranks = torch.empty_like(order).scatter_(-1, order, torch.arange(order.shape[-1], device=order.device).expand_as(order))
    return candidates & (ranks < n[:, None])

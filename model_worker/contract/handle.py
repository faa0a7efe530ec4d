"""The web tier's handle on a generation in Redis: note it sent, cancel it, see whether a worker took it,
read what the reaper needs, and take the reaper's turn, without naming a key (`stream` and `lifecycle` own them)."""

from __future__ import annotations

import uuid

from model_worker.contract import lifecycle, stream
from model_worker.contract.pages import PageOutcome, PageRequest

REAPER_LOCK_KEY = "explainer:reaper:lock"


def sent(r, generation_id: str, request: PageRequest, ttl_s: int) -> None:
    """Note that the generation's task is going on the queue: the ticket, and the request the reaper sends
    again if the task is lost."""
    pipe = r.pipeline(transaction=True)
    lifecycle.keep_request(pipe, generation_id, request.to_dict(), ttl_s)
    lifecycle.ticket(pipe, generation_id, ttl_s)
    pipe.execute()


def kept_request(r, generation_id: str) -> PageRequest | None:
    """The request noted by `sent`, or None when it is gone (expired, or never noted)."""
    raw = lifecycle.kept_request(r, generation_id)
    return PageRequest.from_dict(raw) if raw is not None else None


def cancel(r, generation_id: str, *, queued: bool, ttl_s: int) -> PageOutcome | None:
    """Ask the generation to stop. A worker writing it stops at its next block boundary. One still `queued`
    is finished here when no worker has claimed it: taking the claim is atomic against a worker's, so
    whoever gets it decides, and a worker that takes the task later finds it finished and skips it. Returns
    the cancelled outcome to record when this call finished it, else None."""
    stream.cancel(r, generation_id, ttl_s)
    if not queued:
        return None
    token = f"web-cancel:{uuid.uuid4().hex[:8]}"
    if lifecycle.claim(r, generation_id, token) in (lifecycle.HELD, lifecycle.FINISHED):
        return None  # a worker has it (or it ended): the flag stops it
    outcome = PageOutcome(status="cancelled")
    lifecycle.finish(r, generation_id, token, outcome.to_dict(), ttl_s)
    return outcome


def unclaimed(r, generation_ids: list[str]) -> list[bool]:
    """For each generation, whether no worker has taken it yet (one round trip)."""
    if not generation_ids:
        return []
    return [claim is None for claim in lifecycle.claims(r, generation_ids)]


def claim_state(r, generation_id: str) -> lifecycle.State:
    """Everything the reaper reads about who holds a generation, in one round trip."""
    return lifecycle.State.of(lifecycle.state(r, generation_id))


def reaper_turn(r, hold_s: int = 60) -> bool:
    """Take the reaper's turn (passes never overlap); False while another pass holds it."""
    return bool(r.set(REAPER_LOCK_KEY, 1, nx=True, ex=hold_s))


def reaper_turn_end(r) -> None:
    r.delete(REAPER_LOCK_KEY)

"""Who holds a generation, in Redis: its ticket while queued, a worker's claim while running, its outcome.

The web side writes the ticket when it sends the task; the GPU worker takes the claim, keeps it alive
(a short TTL refreshed by a heartbeat thread), and swaps it for `finished` plus the
outcome when the page ends. The reaper (explainer/services/lifecycle.py) reads all of it to find
generations nobody will finish. Keys, for generation `<id>` (beside those of `model_worker.contract.stream`):

    explainer:gen:<id>:ticket    unix time the task was sent; gone once a worker claims it
    explainer:gen:<id>:claim     "running:<token>" (TTL CLAIM_TTL_S, refreshed) or "finished"
    explainer:gen:<id>:attempts  how many times a worker has claimed it
    explainer:gen:<id>:beat      unix time of the holder's last heartbeat
    explainer:gen:<id>:outcome   the `PageOutcome` as JSON, kept until the web side recorded it
    explainer:gen:<id>:requeued  how many times the reaper sent the task again
    explainer:gen:<id>:request   the task's request, for sending it again
    explainer:gen:<id>:told      the last attempt whose lost worker the learner was told about

Each helper is one Redis call, so it serves `redis.Redis` and (awaited) `redis.asyncio.Redis`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from model_worker.config.environment import env_number
from model_worker.contract.stream import DEFAULT_TTL_S, key

CLAIM_TTL_S = env_number("GENERATION_CLAIM_TTL_S", 15, minimum=3)
HEARTBEAT_S = max(CLAIM_TTL_S / 3, 1.0)
# A claim gone this long past its holder's last beat, with nobody taking it again: the worker is lost.
LOST_AFTER_S = CLAIM_TTL_S + 5
# A page that has already cost this many workers is failed, not tried again.
MAX_ATTEMPTS = 2

HELD = 0  # `claim` result: another worker holds it
FINISHED = -1  # `claim` result: it already ended

# Take the claim unless someone holds it: count the attempt, drop the ticket, note the first beat.
_CLAIM = """
local held = redis.call('GET', KEYS[1])
if held then
  if held == 'finished' then return -1 end
  return 0
end
redis.call('SET', KEYS[1], 'running:' .. ARGV[1], 'EX', ARGV[2])
local n = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('DEL', KEYS[3])
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[4])
return n
"""

# Extend the claim only while this worker still holds it; 0 means it was lost (expired, taken).
_REFRESH = """
if redis.call('GET', KEYS[1]) ~= 'running:' .. ARGV[1] then return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])
return 1
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) ~= 'running:' .. ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""

# The outcome and the `finished` mark land together, before the finish task is sent: if that task is
# lost, the reaper records the outcome from here.
_FINISH = """
local held = redis.call('GET', KEYS[1])
if held ~= 'running:' .. ARGV[1] and held ~= false then return 0 end
redis.call('SET', KEYS[1], 'finished', 'EX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return 1
"""


def ticket(r, generation_id: str, ttl_s: int = DEFAULT_TTL_S, now: float | None = None):
    """Note that the generation's task is on the queue (set again whenever it is sent again)."""
    return r.set(key(generation_id, "ticket"), repr(time.time() if now is None else now), ex=ttl_s)


def claim(r, generation_id: str, token: str, ttl_s: int = CLAIM_TTL_S, keep_s: int = DEFAULT_TTL_S):
    """Take the generation: the attempt number (1, 2, ...), or `HELD` / `FINISHED`."""
    return r.eval(_CLAIM, 4, key(generation_id, "claim"), key(generation_id, "attempts"),
                  key(generation_id, "ticket"), key(generation_id, "beat"), token, ttl_s, repr(time.time()), keep_s)


def refresh(r, generation_id: str, token: str, ttl_s: int = CLAIM_TTL_S, keep_s: int = DEFAULT_TTL_S):
    """The holder's heartbeat; falsy when the claim is no longer this worker's."""
    return r.eval(_REFRESH, 2, key(generation_id, "claim"), key(generation_id, "beat"), token, ttl_s,
                  repr(time.time()), keep_s)


# Take over a claim whose holder is known dead (its process on this host is gone), without waiting for
# the claim to lapse; only if it is still that holder's.
_TAKE_OVER = """
if redis.call('GET', KEYS[1]) ~= 'running:' .. ARGV[5] then return 0 end
redis.call('SET', KEYS[1], 'running:' .. ARGV[1], 'EX', ARGV[2])
local n = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('DEL', KEYS[3])
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[4])
return n
"""


def take_over(r, generation_id: str, token: str, dead: str, ttl_s: int = CLAIM_TTL_S,
              keep_s: int = DEFAULT_TTL_S):
    """Take the claim from the dead holder `dead`: the attempt number, or 0 if it no longer holds it."""
    return r.eval(_TAKE_OVER, 4, key(generation_id, "claim"), key(generation_id, "attempts"),
                  key(generation_id, "ticket"), key(generation_id, "beat"), token, ttl_s, repr(time.time()), keep_s,
                  dead)


def holder(r, generation_id: str) -> str | None:
    """The token of the worker holding the claim, if one does."""
    value = r.get(key(generation_id, "claim"))
    value = value.decode() if isinstance(value, bytes) else value
    return value.removeprefix("running:") if value and value.startswith("running:") else None


def claims(r, generation_ids: list[str]):
    """The raw claims of several generations (None where no worker has taken one), in one MGET."""
    return r.mget([key(g, "claim") for g in generation_ids])


def claim_left_s(r, generation_id: str) -> float:
    """Seconds until the current claim lapses (0 when there is none, or it never lapses)."""
    left_ms = r.pttl(key(generation_id, "claim"))
    return max(left_ms, 0) / 1000


def release(r, generation_id: str, token: str):
    """Give the claim up (so a retry may take it at once), if this worker still holds it."""
    return r.eval(_RELEASE, 1, key(generation_id, "claim"), token)


def finish(r, generation_id: str, token: str, outcome: dict, ttl_s: int = DEFAULT_TTL_S):
    """Mark the generation finished and keep its outcome; falsy when another worker holds it."""
    body = json.dumps({"outcome": outcome, "at": time.time()}, ensure_ascii=False)
    return r.eval(_FINISH, 2, key(generation_id, "claim"), key(generation_id, "outcome"), token, body, ttl_s)


def keep_request(r, generation_id: str, request: dict, ttl_s: int = DEFAULT_TTL_S):
    """The task's request, kept so the reaper can send the task again."""
    return r.set(key(generation_id, "request"), json.dumps(request, ensure_ascii=False), ex=ttl_s)


def kept_request(r, generation_id: str) -> dict | None:
    raw = r.get(key(generation_id, "request"))
    return json.loads(raw) if raw else None


def count_requeue(r, generation_id: str, ttl_s: int = DEFAULT_TTL_S):
    """One more resend by the reaper; returns how many there have been (INCR + EXPIRE in one go)."""
    pipe = r.pipeline(transaction=True)
    pipe.incr(key(generation_id, "requeued"))
    pipe.expire(key(generation_id, "requeued"), ttl_s)
    return pipe.execute()


def note_told(r, generation_id: str, attempt: int, ttl_s: int = DEFAULT_TTL_S):
    """Record that the learner heard attempt `attempt` was lost (so they hear it once)."""
    return r.set(key(generation_id, "told"), attempt, ex=ttl_s)


STATE_KEYS = ("ticket", "claim", "attempts", "beat", "outcome", "requeued", "told")


def state(r, generation_id: str):
    """The raw values of `STATE_KEYS`; pass them to `State.of`."""
    return r.mget(*(key(generation_id, name) for name in STATE_KEYS))


@dataclass(frozen=True)
class State:
    ticket: float | None  # when the task was (last) sent, while no worker has claimed it
    claim: str | None  # "running:<token>", "finished" or None
    attempts: int
    beat: float | None  # the holder's last heartbeat
    outcome: dict | None  # the outcome the worker reported, once finished
    finished_at: float | None
    requeued: int
    told: int  # the last attempt whose loss the learner heard about

    @classmethod
    def of(cls, values) -> State:
        ticket_, claim_, attempts, beat, outcome, requeued, told = (
            v.decode() if isinstance(v, bytes) else v for v in values
        )
        finished = json.loads(outcome) if outcome else {}
        return cls(
            ticket=float(ticket_) if ticket_ else None, claim=claim_, attempts=int(attempts or 0),
            beat=float(beat) if beat else None, outcome=finished.get("outcome"), finished_at=finished.get("at"),
            requeued=int(requeued or 0), told=int(told or 0),
        )

    @property
    def running(self) -> bool:
        return bool(self.claim and self.claim.startswith("running:"))

    @property
    def finished(self) -> bool:
        return self.claim == "finished"

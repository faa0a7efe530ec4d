"""The per-generation event stream in Redis, and the flags that steer a running generation.

Each helper issues one Redis call (a command, a transaction or a script) and returns its result, so it
serves `redis.Redis` directly and `redis.asyncio.Redis` when awaited. Keys, for generation `<id>`:

    explainer:gen:<id>:events    stream; entry id `<n>-0` holds field `e` = JSON `{"id": n, "type": ...}`
    explainer:gen:<id>:seq       counter behind `n`, so ids increase within a generation whoever writes
    explainer:gen:<id>:cancel    set: stop at the next block boundary
    explainer:gen:<id>:viewers   set of sockets watching
    explainer:gen:<id>:orphaned  unix time after which a generation nobody watches stops

Who holds the generation (ticket, claim, heartbeat, outcome) is `model_worker.contract.lifecycle`.
"""

from __future__ import annotations

import json
import time

from model_worker.contract.events import Event

DEFAULT_MAXLEN = 5000
DEFAULT_TTL_S = 3600

# The stream entry id is the event id, so "replay everything after event n" is one XREAD/XRANGE from
# `n-0`. INCR and XADD run in one script, so entries land in id order even with several writers.
_APPEND = """
local n = redis.call('INCR', KEYS[2])
local entry = '{"id":' .. n .. ',' .. string.sub(ARGV[1], 2)
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], n .. '-0', 'e', entry)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return n
"""

_LEAVE = """
redis.call('SREM', KEYS[1], ARGV[1])
if redis.call('SCARD', KEYS[1]) == 0 then
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
  return 1
end
return 0
"""


def key(generation_id: str, name: str) -> str:
    return f"explainer:gen:{generation_id}:{name}"


def append(r, generation_id: str, event: Event, *, maxlen: int = DEFAULT_MAXLEN, ttl_s: int = DEFAULT_TTL_S):
    """Append one server event; returns its id."""
    return r.eval(*_append_args(generation_id, event, maxlen, ttl_s))


def exchange(r, generation_id: str, events: list[Event], *, maxlen: int = DEFAULT_MAXLEN,
             ttl_s: int = DEFAULT_TTL_S):
    """What a worker does in one round trip: append `events` (in order) and read the stop flags. Returns the
    flags (pass them to `stop_due`). The claim's heartbeat is `model_worker.contract.lifecycle`'s."""
    pipe = r.pipeline(transaction=False)
    for event in events:
        pipe.eval(*_append_args(generation_id, event, maxlen, ttl_s))
    pipe.mget(key(generation_id, "cancel"), key(generation_id, "orphaned"))
    return pipe.execute()[-1]


def _append_args(generation_id: str, event: Event, maxlen: int, ttl_s: int) -> tuple:
    text = json.dumps(event.to_wire(), ensure_ascii=False, separators=(",", ":"))
    return _APPEND, 2, key(generation_id, "events"), key(generation_id, "seq"), text, maxlen, ttl_s


def decode(entries) -> list[dict]:
    """Events from XRANGE/XREAD entries `[(entry_id, {b"e": json}), ...]`."""
    return [json.loads(fields[b"e"] if b"e" in fields else fields["e"]) for _, fields in entries]


def since(r, generation_id: str, after: int = 0):
    """Raw entries with an id above `after` (XRANGE; pass the result to `decode`)."""
    return r.xrange(key(generation_id, "events"), min=f"({after}-0", max="+")


def last(r, generation_id: str):
    """The stream's last raw entry (XREVRANGE); pass the result to `last_id`."""
    return r.xrevrange(key(generation_id, "events"), count=1)


def last_id(entries) -> int | None:
    """The event id of `last`'s entry, or None when the stream has expired (or never was)."""
    if not entries:
        return None
    entry_id = entries[0][0].decode() if isinstance(entries[0][0], bytes) else entries[0][0]
    return int(entry_id.split("-")[0])


def read(r, generation_id: str, after: int, block_ms: int):
    """Block up to `block_ms` for entries above `after` (XREAD; `[[stream, entries]]` or empty)."""
    return r.xread({key(generation_id, "events"): f"{after}-0"}, block=block_ms)


def cancel(r, generation_id: str, ttl_s: int = DEFAULT_TTL_S):
    return r.set(key(generation_id, "cancel"), 1, ex=ttl_s)


def viewer_join(r, generation_id: str, viewer: str, ttl_s: int = DEFAULT_TTL_S):
    """Record a watching socket and lift any orphan deadline."""
    pipe = r.pipeline(transaction=True)
    pipe.sadd(key(generation_id, "viewers"), viewer)
    pipe.expire(key(generation_id, "viewers"), ttl_s)
    pipe.delete(key(generation_id, "orphaned"))
    return pipe.execute()


def viewer_leave(r, generation_id: str, viewer: str, grace_s: float, ttl_s: int = DEFAULT_TTL_S):
    """Forget a socket; when it was the last one, the generation stops once `grace_s` has passed."""
    deadline = time.time() + grace_s
    return r.eval(_LEAVE, 2, key(generation_id, "viewers"), key(generation_id, "orphaned"),
                  viewer, repr(deadline), ttl_s)


def flags(r, generation_id: str):
    """`[cancel, orphaned]` raw values; pass them to `stop_due`."""
    return r.mget(key(generation_id, "cancel"), key(generation_id, "orphaned"))


def stop_due(values, now: float | None = None) -> bool:
    """Whether `flags` say stop: cancelled, or orphaned past its deadline."""
    cancelled, orphaned = values
    if cancelled is not None:
        return True
    return orphaned is not None and float(orphaned) <= (time.time() if now is None else now)

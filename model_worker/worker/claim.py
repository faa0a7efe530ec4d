"""Who holds a generation: this worker's claim kept alive by a heartbeat, its token, holders that are gone."""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid

import redis

from model_worker.contract import lifecycle, stream

log = logging.getLogger(__name__)


class Claim:
    """This worker's hold on a generation, kept alive by a heartbeat thread."""

    def __init__(self, r, generation_id: str, token: str, *, ttl_s: int = lifecycle.CLAIM_TTL_S,
                 every_s: float = lifecycle.HEARTBEAT_S, keep_s: int = stream.DEFAULT_TTL_S):
        self.r, self.generation_id, self.token = r, generation_id, token
        self.ttl_s, self.every_s, self.keep_s = ttl_s, every_s, keep_s
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat {generation_id}", daemon=True)

    def beat(self) -> bool:
        """Refresh the claim; False (for good) once it is no longer this worker's."""
        if not self.lost:
            try:
                self.lost = not lifecycle.refresh(self.r, self.generation_id, self.token, self.ttl_s, self.keep_s)
            except redis.RedisError as exc:  # Redis away for a moment: the claim lasts ttl_s meanwhile
                log.warning("heartbeat of %s failed: %s", self.generation_id, exc)
        return not self.lost

    def _run(self) -> None:
        while not self._stop.wait(self.every_s) and self.beat():
            pass

    def __enter__(self) -> Claim:
        _held.add(self.token)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        _held.discard(self.token)
        self._stop.set()
        self._thread.join(timeout=5)


# Tokens of the claims this process's tasks hold now: a thread pool (MODEL_BATCH) runs several at once.
_held: set[str] = set()


def new_token() -> str:
    """A claim token naming this host, process and attempt: a later delivery can tell its holder is gone."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def dead_holder(r, generation_id: str) -> str | None:
    """The holder's token when it names a process on this host that no longer exists, or an earlier
    attempt of this very process that ended without letting go (say while Redis was away): one no
    task of this process holds now."""
    token = lifecycle.holder(r, generation_id)
    host, _, rest = (token or "").partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return None
    if int(pid) == os.getpid():
        return None if token in _held else token
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return token
    except PermissionError:  # alive, someone else's
        return None
    return None

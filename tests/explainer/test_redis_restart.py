"""The Redis `make run` starts keeps what it holds across a restart (AOF), and clients that held
connections to the old server carry on with the new one (health check, one retry)."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
import redis
import redis.asyncio as aioredis

from explainer.management.commands.runall import redis_argv
from model_worker.contract import stream
from model_worker.contract.connection import async_options, sync_options
from model_worker.contract.events import Commit, Queued
from tests.support.net import free_port, listening

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


@pytest.fixture
def restartable_redis(tmp_path):
    port = free_port()
    procs = []

    def start():
        proc = subprocess.Popen(redis_argv(shutil.which("redis-server"), port, tmp_path),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        deadline = time.monotonic() + 10
        while not listening("127.0.0.1", port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def restart():
        procs[-1].terminate()  # SIGTERM: redis-server flushes its AOF and exits
        procs[-1].wait(10)
        start()

    start()
    yield f"redis://127.0.0.1:{port}/0", restart
    for proc in procs:
        proc.terminate()
        proc.wait(10)


def test_a_live_view_can_resume_after_redis_restarts_and_the_old_connection_is_replaced(restartable_redis):
    url, restart = restartable_redis
    r = redis.Redis.from_url(url, **sync_options())
    for n in range(3):
        stream.append(r, "g", Commit(block=n, text=f"block {n}"))
    restart()
    # The pooled connection died with the old server; the first call after the restart still succeeds.
    assert [e["id"] for e in stream.decode(stream.since(r, "g", after=1))] == [2, 3]
    assert stream.append(r, "g", Commit(block=3, text="block 3")) == 4  # ids go on from where they were


async def test_the_sockets_redis_client_reconnects_after_a_restart(restartable_redis):
    url, restart = restartable_redis
    r = aioredis.Redis.from_url(url, **async_options())
    try:
        await stream.append(r, "g", Queued(thread="t", position=0))
        restart()
        assert await r.exists(stream.key("g", "events"))
    finally:
        await r.aclose()

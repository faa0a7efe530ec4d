"""With real workers: a GPU worker's child killed mid-page still delivers the page (Celery redelivers the
task, the next attempt takes the lapsed claim and writes it again), and the learner is told."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.support.net import TEST_BACKEND
from tests.support.sockets import generation_row, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_workers")]

TIMEOUT = 60


@pytest.fixture(autouse=True)
def test_backend(monkeypatch, tmp_path):
    monkeypatch.setenv("MODEL_BACKEND", TEST_BACKEND)
    monkeypatch.setenv("MODEL_PATH", str(tmp_path))


def gpu_children(celery_workers) -> list[int]:
    gpu = celery_workers.procs[0]
    out = subprocess.run(["pgrep", "-P", str(gpu.pid)], capture_output=True, text=True)
    return [int(pid) for pid in out.stdout.split()]


async def test_a_gpu_worker_killed_mid_page_delivers_the_page_and_tells_the_learner(connect, celery_workers):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "[[slow]] Why is the sky blue?"})
    seen = []
    while not [e for e in seen if e["type"] == "commit"]:
        seen.append(await ws.receive_json_from(timeout=TIMEOUT))
    [child] = gpu_children(celery_workers)
    os.kill(child, signal.SIGKILL)
    killed = time.monotonic()
    while True:
        event = await ws.receive_json_from(timeout=TIMEOUT)
        seen.append(event)
        if event["type"] == "retry" and "told" not in locals():
            told = time.monotonic() - killed
        if event["type"] in ("done", "error"):
            break
    assert event["type"] == "done", event
    assert told < 30  # the learner hears the page is being written again within 30 s
    retry = next(e for e in seen if e["type"] == "retry")
    assert (retry["code"], retry["attempt"]) == ("worker_lost", 2)
    after = seen[seen.index(retry) + 1:]
    from model_worker.contract.pages import PageRequest
    from tests.support.denoiser import page_for

    page = page_for(PageRequest(question="[[slow]] Why is the sky blue?", topic="sky-blue"))
    assert "".join(e["text"] for e in after if e["type"] == "commit") == page


async def test_a_killed_page_is_written_again_ahead_of_the_pages_asked_after_it(connect, celery_workers):
    first, second = await connect(), await connect()
    await first.send_json_to({"type": "ask", "question": "[[slow]] Why is the sky blue?"})
    await receive_until(first, {"commit"}, [], timeout=TIMEOUT)
    await second.send_json_to({"type": "ask", "question": "[[slow]] How do tides work?"})
    waiting = await receive_until(second, {"queued", "error"}, [], timeout=TIMEOUT)
    assert waiting["type"] == "queued", waiting
    [child] = gpu_children(celery_workers)
    os.kill(child, signal.SIGKILL)
    killed = await receive_until(first, {"done", "error"}, [], timeout=TIMEOUT)
    behind = await receive_until(second, {"done", "error"}, [], timeout=TIMEOUT)
    assert (killed["type"], behind["type"]) == ("done", "done")
    killed_row, behind_row = await generation_row(killed["generation"]), await generation_row(behind["generation"])
    # Sent again at the back of the queue, the killed page would be written after the one asked later.
    assert killed_row.finished_at < behind_row.finished_at


async def test_done_arrives_while_the_render_check_worker_is_busy(connect, celery_workers):
    gpu, finish, qa = celery_workers.procs
    os.kill(qa.pid, signal.SIGSTOP)  # the qa worker takes nothing, as when both slots run long checks
    try:
        ws = await connect()
        await ws.send_json_to({"type": "ask", "question": "How do tides work?"})
        while (event := await ws.receive_json_from(timeout=TIMEOUT))["type"] not in ("done", "error"):
            pass
        assert event["type"] == "done", event
    finally:
        os.kill(qa.pid, signal.SIGCONT)

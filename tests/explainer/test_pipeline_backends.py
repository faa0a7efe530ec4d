"""Real models through the whole pipeline: ask over the websocket, a real GPU worker runs the `transformers`
backend on a tiny random model folder (a causal Qwen3.5, a block-diffusion DiffusionGemma) or the `openai`
backend against `transformers serve`. Random weights write no page: the stream, the stats, the cancel and
the error are asserted, never the page."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from explainer.models import Generation
from tests.support import sockets
from tests.support.net import free_port, listening
from tests.support.sockets import generation_row

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.usefixtures("celery_workers")]

TIMEOUT = 90


async def receive_until(ws, types: set[str], seen: list[dict]) -> dict:
    return await sockets.receive_until(ws, types, seen, timeout=TIMEOUT)


@pytest.fixture(scope="module", params=["causal", "diffusion", "openai"])
def worker_env(request, tmp_path_factory):
    """The GPU worker's backend: one module run per model."""
    if request.param == "openai":
        folder = request.getfixturevalue("tiny_qwen_dir")
        port = free_port()
        log = tmp_path_factory.mktemp("serve") / "serve.log"
        proc = subprocess.Popen([str(Path(sys.executable).parent / "transformers"), "serve", str(folder),
                                 "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"],
                                stdout=log.open("wb"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while not listening("127.0.0.1", port):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"transformers serve did not come up:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        # transformers serve writes this tiny model at about 10 tokens/s on a busy 2-core machine.
        yield {"MODEL_BACKEND": "openai", "MODEL_BASE_URL": f"http://127.0.0.1:{port}/v1",
               "MODEL_MAX_NEW_TOKENS": "120"}
        proc.terminate()
        proc.wait(15)
        return
    folder = request.getfixturevalue("tiny_qwen_dir" if request.param == "causal" else "tiny_diffusion_dir")
    # Block diffusion runs up to 4 denoising forwards a 16-token canvas: fewer tokens keep it quick.
    tokens = "600" if request.param == "causal" else "160"
    yield {"MODEL_BACKEND": "transformers", "MODEL_PATH": str(folder), "MODEL_DEVICE": "cpu",
           "MODEL_MAX_NEW_TOKENS": tokens}


async def test_a_real_model_streams_its_reply_and_a_reply_without_a_page_fails_clearly(connect, worker_env):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "Why is the sky blue?"})
    seen: list[dict] = []
    end = await receive_until(ws, {"done", "error"}, seen)
    types = [e["type"] for e in seen]
    assert types[0] == "queued" and "commit" in types and "stats" in types
    if worker_env.get("MODEL_PATH", "").find("diffusion") >= 0:
        assert "draft" in types  # block diffusion shows its denoising canvas
    stats = [e for e in seen if e["type"] == "stats"]
    assert stats[-1]["tokens"] > 0 and stats[-1]["tokens_per_s"] > 0
    assert (end["type"], end["code"]) == ("error", "bad_reply") and "page" in end["message"]
    row = await generation_row(end["generation"])
    assert (row.status, row.error_code) == (Generation.Status.FAILED, "bad_reply")
    assert row.stats["tokens"] > 0


async def test_cancel_stops_a_real_model_within_a_block(connect):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "How do tides work?"})
    seen: list[dict] = []
    await receive_until(ws, {"commit"}, seen)
    generation = seen[0]["generation"]
    await ws.send_json_to({"type": "cancel", "generation": generation})
    end = await receive_until(ws, {"error", "done"}, seen)
    assert (end["type"], end["code"]) == ("error", "cancelled")
    assert (await generation_row(generation)).status == Generation.Status.CANCELLED

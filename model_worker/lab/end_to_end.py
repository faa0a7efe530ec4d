"""The bench's prompts through the product: the real Celery task in a real worker, read off the Redis stream.

The bench starts a private `redis-server` and one GPU worker (`celery -A model_worker.worker.celery_app`)
on it, then plays the web tier: it enqueues `model_worker.generate_page` for each prompt and reads the
generation's stream as the learner's socket would. Times run from the enqueue to the first `commit`
event read (`first_block_s`) and to the last (`seconds`), so they hold everything a learner waits for:
the queue, the prompt, the decoding, the stream writes and the read. No web worker runs: the task's
hand-off to `explainer.finish_generation` stays on the `qa` queue, where the bench reads the outcome.

A shared machine's speed drifts over minutes, so the engine is timed again beside the app: prompt by
prompt, the engine alone (the bench's `verified` backend, no callbacks) and the app take turns, in
alternating order, and `of_engine` compares the two sums.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from model_worker.config import REPO_ROOT
from model_worker.contract import lifecycle, stream
from model_worker.contract.pages import PageOutcome, PageRequest
from model_worker.contract.queues import FINISH_QUEUE, GPU_QUEUE, PAGE_PRIORITY

START_TIMEOUT_S = 300  # the worker imports torch and loads the checkpoint before its first commit
PAGE_TIMEOUT_S = 900


def end_to_end(path: Path, prompts, *, device: str, threads: int | None, max_new_tokens: int | None,
               engine: Callable[[PageRequest], dict], engine_pages: list[str] | None = None,
               log_dir: Path | None = None) -> dict:
    """Summed figures of every prompt through the task, as the `end_to_end` section of the bench.

    `engine(request)` decodes one request with the engine alone and returns its `tokens`, `seconds`
    and `first_block_s`; it runs beside each page the app writes.
    """
    import redis

    requests = [PageRequest(question=q, lang=lang, topic=slug) for lang, q, slug in prompts]
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}  # the worker has no Django
    env.update(MODEL_PATH=str(path), MODEL_DEVICE=device, MODEL_DECODING="verified",
               MODEL_BACKEND="model_worker.backends.clover:CloverBackend",
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p))
    for name, value in (("MODEL_THREADS", threads), ("MODEL_MAX_NEW_TOKENS", max_new_tokens)):
        if value is not None:
            env[name] = str(value)
        else:
            env.pop(name, None)
    with tempfile.TemporaryDirectory(prefix="bench-e2e-") as folder:
        logs = log_dir or Path(folder)
        with _redis_server(Path(folder)) as url, _gpu_worker(url, env, logs / "gpu-worker.log"):
            r = redis.Redis.from_url(url)
            app = _client(url)
            _warm_up(r, app, requests[0], logs / "gpu-worker.log")
            runs, alone = [], []
            for i, request in enumerate(requests):
                if i % 2:
                    runs.append(_one_page(r, app, request))
                    alone.append(engine(request))
                else:
                    alone.append(engine(request))
                    runs.append(_one_page(r, app, request))
    totals = {k: sum(run[k] for run in runs) for k in ("tokens", "seconds", "first_block_s")}
    seconds = max(totals["seconds"], 1e-9)
    engine_seconds = max(sum(a["seconds"] for a in alone), 1e-9)
    worker_seconds = sum(run["outcome"].stats.get("seconds", 0.0) for run in runs)
    tokens_per_s = totals["tokens"] / seconds
    engine_tokens_per_s = sum(a["tokens"] for a in alone) / engine_seconds
    result = {
        "prompts": len(runs),
        "tokens": totals["tokens"],
        "seconds": round(seconds, 3),
        "tokens_per_s": round(tokens_per_s, 2),
        "first_block_s": round(totals["first_block_s"] / len(runs), 4),
        # The engine alone on the same prompts, timed in turn with the app.
        "engine_tokens_per_s": round(engine_tokens_per_s, 2),
        "engine_first_block_s": round(sum(a["first_block_s"] for a in alone) / len(alone), 4),
        "of_engine": round(tokens_per_s / engine_tokens_per_s, 3),
        # The decoding alone, as the worker timed it (the `done` stats a learner's page shows).
        "worker_tokens_per_s": round(sum(run["outcome"].stats.get("tokens", 0) for run in runs)
                                     / max(worker_seconds, 1e-9), 2),
        "statuses": [run["outcome"].status for run in runs],
        # Per prompt, in order: tokens, and seconds through the app and by the engine alone.
        "per_prompt": [{"tokens": run["tokens"], "seconds": round(run["seconds"], 3),
                        "engine_seconds": round(a["seconds"], 3)} for run, a in zip(runs, alone, strict=True)],
    }
    if engine_pages is not None:
        result["same_page_as_engine"] = sum(run["outcome"].html == page
                                            for run, page in zip(runs, engine_pages, strict=True))
    return result


def _one_page(r, app, request: PageRequest) -> dict:
    """Enqueue one page, read its stream to the end; token count and times as the reader saw them."""
    generation_id = uuid.uuid4().hex
    started = time.perf_counter()
    app.send_task("model_worker.generate_page", args=[generation_id, request.to_dict()], queue=GPU_QUEUE,
                  priority=PAGE_PRIORITY)
    first = last = None
    tokens, after = 0, 0
    deadline = time.monotonic() + PAGE_TIMEOUT_S
    while True:
        reply = stream.read(r, generation_id, after, block_ms=500)
        for _, entries in reply or ():
            for event in stream.decode(entries):
                after = event["id"]
                if event["type"] == "commit":
                    last = time.perf_counter()
                    first = first or last
                elif event["type"] == "stats":
                    tokens = event["tokens"]
        if not reply and _finished(r, generation_id):
            if not stream.since(r, generation_id, after):
                break
        if time.monotonic() > deadline:
            raise RuntimeError(f"end-to-end: the page for {request.question!r} took over {PAGE_TIMEOUT_S} s")
    outcome = _outcome(r, generation_id)
    if first is None:
        raise RuntimeError(f"end-to-end: no block was streamed for {request.question!r}: {outcome}")
    return {"tokens": tokens, "seconds": last - started, "first_block_s": first - started, "outcome": outcome}


def _warm_up(r, app, request: PageRequest, log: Path) -> None:
    """One page, cancelled after its first block: the worker loads the model and warms up off the clock."""
    generation_id = uuid.uuid4().hex
    app.send_task("model_worker.generate_page", args=[generation_id, request.to_dict()], queue=GPU_QUEUE,
                  priority=PAGE_PRIORITY)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _finished(r, generation_id):
        if any(e["type"] == "commit" for e in stream.decode(stream.since(r, generation_id))):
            stream.cancel(r, generation_id)
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(f"end-to-end: the worker wrote no page within {START_TIMEOUT_S} s\n{tail}")
        time.sleep(0.05)
    _outcome(r, generation_id)


def _finished(r, generation_id: str) -> bool:
    return lifecycle.State.of(lifecycle.state(r, generation_id)).claim == "finished"


def _outcome(r, generation_id: str) -> PageOutcome:
    """The outcome the task handed to the `finish` queue for this generation (no web worker takes it here)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for raw in r.lrange(FINISH_QUEUE, 0, -1):
            message = json.loads(raw)
            args = json.loads(base64.b64decode(message["body"]))[0]
            if args[0] == generation_id:
                r.lrem(FINISH_QUEUE, 1, raw)
                return PageOutcome.from_dict(args[1])
        time.sleep(0.05)
    raise RuntimeError(f"end-to-end: generation {generation_id} handed no outcome to the finish queue")


def _client(url: str):
    from celery import Celery

    return Celery("bench", broker=url, fixups=[])


@contextmanager
def _redis_server(folder: Path):
    server = shutil.which("redis-server")
    if server is None:
        raise FileNotFoundError("--end-to-end needs redis-server (apt-get install redis-server)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(lambda: _listening(port), 10, "redis-server", proc)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


@contextmanager
def _gpu_worker(url: str, env: dict, log: Path):
    args = [sys.executable, "-m", "celery", "-A", "model_worker.worker.celery_app", "worker", "-Q", "gpu", "-c", "1",
            "-n", "bench-gpu@%h", "-l", "info", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, cwd=REPO_ROOT, env={**env, "REDIS_URL": url}, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        _wait(lambda: b" ready." in log.read_bytes(), 120, "the GPU worker", proc, log)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait(ready, timeout_s: float, what: str, proc: subprocess.Popen, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise RuntimeError(f"end-to-end: {what} did not come up\n{tail}")

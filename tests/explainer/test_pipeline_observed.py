"""A page through real workers, seen as an operator sees it: `/readyz` ready with the workers up, `/metrics`
counting the page where it should, and (LOG_FORMAT=json) every worker's lines about it naming its
generation."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from tests.support import sockets

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_workers")]

TIMEOUT = 180  # a render check waits its turn behind other tests' work on a busy machine


@pytest.fixture(scope="module")
def worker_env() -> dict:
    return {"LOG_FORMAT": "json"}


def _scrape() -> dict[tuple[str, tuple], float]:
    body = Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def _ready_within(timeout: float) -> dict:
    """The workers beat every 5 s (each test starts with Redis emptied): wait for all three."""
    deadline = time.monotonic() + timeout
    while True:
        response = Client().get("/readyz")
        if response.status_code == 200 or time.monotonic() > deadline:
            return {"status_code": response.status_code, **response.json()}
        time.sleep(0.25)


def _json_lines(path) -> list[dict]:
    lines = []
    for raw in path.read_text(errors="replace").splitlines():
        if raw.startswith("{"):
            lines.append(json.loads(raw))
    return lines


async def test_a_page_raises_the_counters_it_should_and_every_worker_names_its_generation(connect, celery_workers):
    ready = await database_sync_to_async(_ready_within)(30)
    assert ready == {"status_code": 200, "status": "ready", "web": "ok", "database": "ok", "redis": "ok",
                     "workers": {"gpu": 1, "finish": 1, "qa": 1}}

    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "Why is the sky blue?"})
    seen: list[dict] = []
    done = await sockets.receive_until(ws, {"done", "error"}, seen, timeout=TIMEOUT)
    assert done["type"] == "done", done
    qa = await sockets.receive_until(ws, {"qa"}, seen, timeout=TIMEOUT)
    generation = done["generation"]

    samples = await database_sync_to_async(_scrape)()

    def value(name, **labels):
        return samples.get((name, tuple(sorted(labels.items()))), 0.0)

    assert value("explainer_router_decisions_total", decision="routed") == 1
    assert value("explainer_generations_total", outcome="done", error_code="") == 1
    assert value("explainer_pages_total", backend="DeterministicDenoiser") == 1
    assert value("explainer_time_to_first_block_seconds_count") == 1
    assert value("explainer_time_to_done_seconds_count") == 1
    assert value("explainer_tokens_per_second_count", backend="DeterministicDenoiser") == 1
    assert value("explainer_render_checks_total", status=qa["status"]) == 1
    assert value("explainer_render_check_seconds_count") == 1
    assert value("explainer_websockets_open") >= 1  # this test's socket, open in this process
    assert value("explainer_workers_live", queue="gpu") == 1
    assert value("explainer_queue_depth", queue="gpu") == 0

    # Each worker wrote JSON lines, and its lines about this page name the generation.
    deadline = time.monotonic() + 10
    while True:
        named = {name: [line for line in _json_lines(celery_workers.logdir / f"{name}.log")
                        if line.get("generation_id") == generation] for name in ("gpu", "finish", "qa")}
        if all(named.values()) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    assert all(named.values()), {name: len(lines) for name, lines in named.items()}
    succeeded = [line for line in named["gpu"] if "succeeded" in line["message"]]
    assert succeeded and succeeded[0]["level"] == "INFO" and succeeded[0]["task_name"] == "model_worker.generate_page"
    assert any("explainer.render_check" in line["message"] for line in named["qa"])
    assert {"time", "level", "logger", "message", "process"} <= set(named["finish"][0])

"""Bounded repair end to end: a real GPU worker (the test denoiser), a real qa worker running the render
check in Chromium, and a socket that follows each repair."""

from __future__ import annotations

import pytest

from tests.support import sockets
from tests.support.sockets import generation_row

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.usefixtures("celery_workers")]

TIMEOUT = 90


async def receive_until(ws, types: set[str], seen: list[dict]) -> dict:
    return await sockets.receive_until(ws, types, seen, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def worker_env() -> dict:
    return {"REPAIR_ATTEMPTS": "2"}


@pytest.mark.browser
async def test_a_page_that_fails_its_check_is_fixed_and_the_learner_sees_fixing_then_the_passing_version(connect):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "[[broken]] Why is the sky blue?"})
    seen: list[dict] = []
    while True:  # the socket follows each repair's generation; the last `qa` has no repair after it
        event = await receive_until(ws, {"qa", "error"}, seen)
        if event["type"] == "error" or not event.get("repair"):
            break
    fixing = [e for e in seen if e["type"] == "fixing"]
    assert [e["attempt"] for e in fixing] == [1, 2] and all(e["attempts"] == 2 for e in fixing)
    assert any("notDefinedAnywhere" in error for error in fixing[0]["errors"])
    done = [e for e in seen if e["type"] == "done"]
    assert [e["version"] for e in done] == [1, 2, 3]
    assert [e["generation"] for e in done][1:] == [e["repair"] for e in fixing]
    assert (event["type"], event["passed"], event["version"]) == ("qa", True, 3), event["summary"]
    rows = [await generation_row(e["generation"]) for e in done]
    assert [row.kind for row in rows] == ["ask", "repair", "repair"]

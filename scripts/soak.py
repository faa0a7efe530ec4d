"""`make soak`: the whole app under load and faults, on loopback, bounded in count and time.

Starts the stack as `make run` does (`manage.py runall`: gpu, finish and qa workers, the web server) on
free ports, with a private redis-server (AOF, as runall starts it) and a throwaway SQLite database, the
deterministic test backend standing in for the model. Then, one after another:

- load-8, load-16: N learners at once, each asking library questions over the websocket;
- worker-kill: the GPU worker's child is killed (SIGKILL) while it writes a page;
- redis-restart: Redis is stopped and started again while pages are being written;
- bad-messages: a burst of malformed messages on one socket, then a real question on it;
- join-brute-force: a burst of join-code guesses against /join/.

It prints one table: generations asked, finished, failed with a clear error, lost (no answer ever
reached the learner), stuck (still active in the database once the reaper had its chance), and
p50/p95 seconds to the first block and to `done`. Exit status 1 when anything was lost or stuck.

    .venv/bin/python scripts/soak.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import http.cookiejar
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import string
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from explainer.management.commands.runall import redis_argv  # noqa: E402

TEST_BACKEND = "tests.support.denoiser:DeterministicDenoiser"
QUESTIONS = [
    "Why is the sky blue?", "How do tides work?", "Why do magnets stick?", "What causes the phases of the Moon?",
    "Why do we have seasons?", "How does a rainbow form?", "What is inside an atom?", "How do plants make food?",
]
SCENARIO_LIMIT_S = 240  # a learner who has heard nothing final by then counts as lost
SETTLE_S = 45  # after a scenario, how long the reaper gets to settle what is still active
BAD_MESSAGES = [
    ("this is not json", "bad_json"), ("[1, 2, 3]", "bad_message"), ({"type": "dance"}, "unknown_type"),
    ({"type": "ask"}, "missing_field"), ({"type": "ask", "question": 42}, "bad_field"),
    ({"type": "ask", "question": "   "}, "empty_question"), ({"type": "ask", "question": "x" * 5000}, "question_too_long"),
    ({"type": "ask", "question": "\u200b\u200b\u200b"}, "empty_question"), ({"type": "cancel"}, "missing_field"),
    ({"type": "resume", "generation": "not-an-id", "after": 0}, "bad_field"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.2)


class Stack:
    """A private Redis and `manage.py runall`, in a temporary folder."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="explainer-soak-"))
        self.port, self.redis_port = free_port(), free_port()
        self.db = self.dir / "soak.sqlite3"
        self.log = self.dir / "runall.log"
        self.redis = self.runall = None
        self.env = {
            **os.environ, "DJANGO_SETTINGS_MODULE": "explainer.settings.dev", "PYTHONPATH": str(ROOT),
            "DATABASE_URL": f"sqlite:///{self.db}", "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "MODEL_BACKEND": TEST_BACKEND, "MODEL_PATH": str(self.dir),
            # Every learner here shares 127.0.0.1: the per-address limit would stop the load, not test it.
            "ANON_QUESTIONS_PER_IP_HOUR": "0",
        }

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.start_redis()
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=self.env, check=True)
        self.runall = subprocess.Popen([sys.executable, "manage.py", "runall", "--port", str(self.port)], cwd=ROOT,
                                       env=self.env, stdout=self.log.open("wb"), stderr=subprocess.STDOUT,
                                       start_new_session=True)
        wait_until(lambda: listening(self.port) and self.log.read_bytes().count(b" ready.") >= 3, 180,
                   "the stack starting")

    def start_redis(self) -> None:
        self.redis = subprocess.Popen(redis_argv(shutil.which("redis-server"), self.redis_port, self.dir),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: listening(self.redis_port), 10, "redis-server listening")

    def stop_redis(self) -> None:
        self.redis.terminate()
        self.redis.wait(10)

    def gpu_child(self) -> int:
        """The pid of the process writing pages: the gpu worker's (prefork) child."""
        for pid in _children(self.runall.pid):
            if b"gpu@" in Path(f"/proc/{pid}/cmdline").read_bytes():
                [child] = _children(pid)
                return child
        raise RuntimeError("no gpu worker")

    def active(self, generation_ids) -> int:
        with sqlite3.connect(self.db, timeout=30) as db:
            rows = db.execute("SELECT id, status FROM explainer_generation").fetchall()
        wanted = {g.replace("-", "") for g in generation_ids}
        return sum(1 for gid, status in rows if gid.replace("-", "") in wanted and status in ("queued", "running"))

    def stop(self) -> None:
        if self.runall and self.runall.poll() is None:
            self.runall.send_signal(signal.SIGINT)
            try:
                self.runall.wait(60)
            except subprocess.TimeoutExpired:
                self.runall.kill()
        if self.redis and self.redis.poll() is None:
            self.stop_redis()
        shutil.rmtree(self.dir, ignore_errors=True)


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


@dataclass
class Ask:
    question: str
    sent: float = 0.0
    generation: str | None = None
    first_block_s: float | None = None
    done_s: float | None = None
    error: tuple[str, str] | None = None
    retried: float | None = None  # when the learner heard the worker was lost (`queued` again, or `retry`)


@dataclass
class Result:
    name: str
    asks: list[Ask] = field(default_factory=list)
    stuck: int = 0
    note: str = ""

    def row(self) -> dict:
        finished = [a for a in self.asks if a.done_s is not None]
        failed = [a for a in self.asks if a.error and a.error[0] and a.error[1]]
        lost = [a for a in self.asks if a.done_s is None and not a.error]
        return {"scenario": self.name, "asked": len(self.asks), "finished": len(finished), "failed": len(failed),
                "lost": len(lost), "stuck": self.stuck,
                "first_block": _p50_p95([a.first_block_s for a in self.asks if a.first_block_s is not None]),
                "done": _p50_p95([a.done_s for a in finished]), "note": self.note}


def _p50_p95(values: list[float]) -> str:
    if not values:
        return "-"
    values = sorted(values)
    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return f"{statistics.median(values):.1f} / {p95:.1f}"


def session_cookie(stack: Stack) -> str:
    """A browser session, as the learner page gives every visitor."""
    jar = http.cookiejar.CookieJar()
    urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar)).open(stack.url + "/", timeout=30).read()
    return "; ".join(f"{c.name}={c.value}" for c in jar)


async def learner(stack: Stack, questions: list[str], asks: list[Ask], on_block=None) -> None:
    """One browser: asks each question in turn and follows it to `done` or `error`, reconnecting and
    resuming (as static/app/socket.js does) when the socket drops."""
    cookie = await asyncio.to_thread(session_cookie, stack)
    ws_url = f"ws://127.0.0.1:{stack.port}/ws/explain/"
    headers = {"Cookie": cookie, "Origin": stack.url}
    for question in questions:
        ask = Ask(question)
        asks.append(ask)
        last_id, backoff = 0, 0.5
        deadline = time.monotonic() + SCENARIO_LIMIT_S
        while time.monotonic() < deadline and ask.done_s is None and not ask.error:
            try:
                async with websockets.connect(ws_url, additional_headers=headers, open_timeout=30) as ws:
                    await ws.recv()  # hello
                    if ask.generation is None:
                        ask.sent = time.monotonic()
                        await ws.send(json.dumps({"type": "ask", "question": question}))
                    else:
                        await ws.send(json.dumps({"type": "resume", "generation": ask.generation, "after": last_id}))
                    backoff = 0.5
                    while ask.done_s is None and not ask.error:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            break
                        event = json.loads(await asyncio.wait_for(ws.recv(), remaining))
                        if event.get("generation") and event.get("id"):
                            if event["id"] <= last_id:
                                continue
                            last_id = event["id"]
                        _on_event(ask, event, on_block)
            except (TimeoutError, OSError, websockets.WebSocketException):
                await asyncio.sleep(backoff * (0.5 + random.random() / 2))
                backoff = min(backoff * 2, 8)


def _on_event(ask: Ask, event: dict, on_block) -> None:
    kind, now = event["type"], time.monotonic() - ask.sent
    if kind == "queued":
        ask.generation = event["generation"]
    if ask.retried is None and (kind == "retry" or (kind == "queued" and event.get("code") == "worker_lost")):
        ask.retried = time.monotonic()
    if kind == "commit" and ask.first_block_s is None:
        ask.first_block_s = now
        if on_block:
            on_block(ask)
    elif kind == "done":
        ask.done_s = now
    elif kind == "error":
        if event["code"] == "unavailable" and event.get("request") == "resume":
            return  # Redis still away: the reconnect loop tries again
        ask.error = (event["code"], event.get("message", ""))


async def settle(stack: Stack, result: Result) -> None:
    """Give the reaper its chance, then count what is still active."""
    ids = [a.generation for a in result.asks if a.generation]
    deadline = time.monotonic() + SETTLE_S
    while (stuck := await asyncio.to_thread(stack.active, ids)) and time.monotonic() < deadline:
        await asyncio.sleep(1)
    result.stuck = stuck


async def load(stack: Stack, n: int, per_learner: int) -> Result:
    result = Result(f"load-{n}")
    await asyncio.gather(*(learner(stack, [QUESTIONS[(i + k) % len(QUESTIONS)] for k in range(per_learner)],
                                   result.asks) for i in range(n)))
    await settle(stack, result)
    return result


async def worker_kill(stack: Stack, n: int) -> Result:
    result = Result("worker-kill")
    killed = asyncio.Event()
    state = {}

    def on_block(ask):
        if not killed.is_set():
            state["ask"], state["at"] = ask, time.monotonic()
            os.kill(stack.gpu_child(), signal.SIGKILL)
            killed.set()

    await asyncio.gather(*(learner(stack, [f"[[slow]] {QUESTIONS[i % len(QUESTIONS)]}"], result.asks, on_block)
                           for i in range(n)))
    await settle(stack, result)
    ask = state.get("ask")
    if ask is not None:
        told = ask.retried or (ask.sent + ask.done_s if ask.done_s else None)
        done = ask.sent + ask.done_s - state["at"] if ask.done_s else None
        result.note = (f"killed page told in {told - state['at']:.1f} s, " if told else "killed page never told, ") + (
            f"delivered {done:.1f} s after the kill" if done is not None
            else f"then {ask.error[0] if ask.error else 'nothing'}")
    return result


async def redis_restart(stack: Stack, n: int) -> Result:
    result = Result("redis-restart")
    restarted = asyncio.Event()

    def on_block(_ask):
        if not restarted.is_set():
            restarted.set()

    async def restart():
        await restarted.wait()
        began = time.monotonic()
        await asyncio.to_thread(stack.stop_redis)
        await asyncio.sleep(2)
        await asyncio.to_thread(stack.start_redis)
        result.note = f"Redis away {time.monotonic() - began:.1f} s"

    restarter = asyncio.create_task(restart())
    await asyncio.gather(*(learner(stack, [f"[[slow]] {QUESTIONS[(i + 3) % len(QUESTIONS)]}"], result.asks, on_block)
                           for i in range(n)))
    await restarter
    await settle(stack, result)
    return result


async def bad_messages(stack: Stack, count: int) -> Result:
    result = Result("bad-messages")
    cookie = await asyncio.to_thread(session_cookie, stack)
    right = 0
    async with websockets.connect(f"ws://127.0.0.1:{stack.port}/ws/explain/", open_timeout=30,
                                  additional_headers={"Cookie": cookie, "Origin": stack.url}) as ws:
        await ws.recv()
        for i in range(count):
            payload, code = BAD_MESSAGES[i % len(BAD_MESSAGES)]
            await ws.send(payload if isinstance(payload, str) else json.dumps(payload))
        for _ in range(count):
            event = json.loads(await asyncio.wait_for(ws.recv(), 60))
            right += event["type"] == "error" and event["code"] in {c for _, c in BAD_MESSAGES}
    await learner(stack, [QUESTIONS[0]], result.asks)
    await settle(stack, result)
    result.note = f"{count} bad messages: {right} answered with their error code, socket kept"
    return result


async def join_brute_force(stack: Stack, guesses: int) -> Result:
    result = Result("join-brute-force")

    def guess_all() -> dict[int, int]:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(stack.url + "/join/", timeout=30).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        statuses: dict[int, int] = {}
        for _ in range(guesses):
            code = "".join(random.choices(string.ascii_uppercase + string.digits, k=6))
            body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "join_code": code,
                                           "display_name": "Guesser"}).encode()
            request = urllib.request.Request(stack.url + "/join/", data=body, headers={"Referer": stack.url + "/join/"})
            try:
                status = opener.open(request, timeout=30).status
            except urllib.error.HTTPError as exc:
                status = exc.code
            statuses[status] = statuses.get(status, 0) + 1
        return statuses

    statuses = await asyncio.to_thread(guess_all)
    result.note = f"{guesses} guesses: {statuses.get(200, 0)} checked, {statuses.get(429, 0)} refused (429)"
    return result


def print_table(rows: list[dict]) -> None:
    columns = ["scenario", "asked", "finished", "failed", "lost", "stuck", "first_block", "done", "note"]
    titles = {"failed": "failed (clear error)", "first_block": "to first block p50 / p95 s",
              "done": "to done p50 / p95 s"}
    print("| " + " | ".join(titles.get(c, c) for c in columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")


SCENARIOS = ["load-8", "load-16", "worker-kill", "redis-restart", "bad-messages", "join-brute-force"]


async def main_async(stack: Stack, quick: bool, only: list[str]) -> list[Result]:
    per_learner = 1 if quick else 2
    runs = {
        "load-8": lambda: load(stack, 8, per_learner),
        "load-16": lambda: load(stack, 16, per_learner),
        "worker-kill": lambda: worker_kill(stack, 2 if quick else 3),
        "redis-restart": lambda: redis_restart(stack, 2 if quick else 3),
        "bad-messages": lambda: bad_messages(stack, 100 if quick else 300),
        "join-brute-force": lambda: join_brute_force(stack, 20 if quick else 40),
    }
    return [await runs[name]() for name in SCENARIOS if not only or name in only]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one question per learner, smaller fault scenarios")
    parser.add_argument("--only", action="append", choices=SCENARIOS, default=[], help="run only this scenario")
    parser.add_argument("--keep-log", action="store_true", help="print runall's log at the end")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        print("soak needs redis-server (make system)", file=sys.stderr)
        return 2
    stack = Stack()
    started = time.monotonic()
    try:
        stack.start()
        print(f"stack up in {time.monotonic() - started:.0f} s at {stack.url}", flush=True)
        results = asyncio.run(main_async(stack, args.quick, args.only))
        if args.keep_log:
            print(stack.log.read_text(errors="replace")[-20000:])
    finally:
        stack.stop()
    rows = [r.row() for r in results]
    print_table(rows)
    print(f"total {time.monotonic() - started:.0f} s")
    return 1 if any(r["lost"] or r["stuck"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

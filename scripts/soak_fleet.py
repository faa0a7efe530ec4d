"""`make soak-fleet`: the app laid out as several machines run it, on this one, then a GPU worker killed.

Separate processes, as docs/deploy.md lays them out, against one Redis and one PostgreSQL database (a
fresh one, dropped at the end), with production settings: two web processes (Daphne; learners take
turns between them, as a load balancer spreads them), two GPU workers (the deterministic test backend
stands in for the model), one finish worker with the reaper, two render-check workers. Then:

- spread: 16 learners ask a question each at once; every page must arrive, and both workers of each
  kind must have taken work (Celery's own per-worker task counts, `inspect().stats()`);
- gpu-kill: 4 learners ask slow questions; at the first block the GPU worker writing one of them is
  killed whole (SIGKILL to its process group), as when its machine dies; every page must still arrive,
  and `/readyz` on both web processes must answer ready throughout, since a worker of each kind lives;
- last-gpu: the other GPU worker is killed too; `/readyz` must turn not ready once its heartbeat lapses.

It prints how the work was spread, what the probes saw, where the killed page's generation shows in the
JSON logs, the deployment's totals from `/metrics` of both web processes, and soak.py's table. Exit
status 1 when a page was lost or stuck, a kind's work was not spread, or a probe answered wrongly.

    .venv/bin/python scripts/soak_fleet.py [--postgres postgres://postgres@127.0.0.1:5432/postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psycopg
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

import soak  # noqa: E402  (the learners, the table and the private Redis of `make soak`)

from model_worker.contract import lifecycle  # noqa: E402

HEARTBEAT_TTL_S = 6
CLAIM_TTL_S = 6
QUESTIONS = 16
SLOW_QUESTIONS = 4
CHECKS_WAIT_S = 600  # render checks of the spread's pages, two at a time in Chromium on a busy machine


@dataclass
class Web:
    name: str
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class Fleet:
    """A private Redis, a fresh PostgreSQL database, and every process of the layout, each in its own
    process group (so killing one kills it whole, pool children included)."""

    def __init__(self, postgres: str):
        self.dir = Path(tempfile.mkdtemp(prefix="explainer-fleet-"))
        self.server_url = postgres
        self.db_name = f"explainer_fleet_{os.getpid()}"
        self.redis_port = soak.free_port()
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.webs = [Web("web1", soak.free_port()), Web("web2", soak.free_port())]
        self.procs: dict[str, subprocess.Popen] = {}
        self.redis_proc = None
        self.token = secrets.token_urlsafe(16)
        self.env = {
            **os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": "explainer.settings.prod", "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost", "SECURE_COOKIES": "0",  # plain HTTP on loopback
            "DATABASE_URL": self._database_url(self.db_name), "REDIS_URL": self.redis_url,
            "MODEL_BACKEND": soak.TEST_BACKEND, "MODEL_PATH": str(self.dir), "METRICS_TOKEN": self.token,
            "ANON_QUESTIONS_PER_IP_HOUR": "0",  # every learner here is 127.0.0.1
            "WORKER_HEARTBEAT_TTL_S": str(HEARTBEAT_TTL_S), "GENERATION_CLAIM_TTL_S": str(CLAIM_TTL_S),
            "REAPER_INTERVAL_S": "2", "LOG_FORMAT": "json",
            # The test backend's page fails the render check's interaction check: no repairs, so the
            # figures count the questions asked.
            "REPAIR_ATTEMPTS": "0",
        }
        self.r = redis.Redis.from_url(self.redis_url)

    def _database_url(self, name: str) -> str:
        return self.server_url.rsplit("/", 1)[0] + "/" + name

    def start(self) -> None:
        self.redis_proc = subprocess.Popen(soak.redis_argv(shutil.which("redis-server"), self.redis_port, self.dir),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        soak.wait_until(lambda: soak.listening(self.redis_port), 10, "redis-server listening")
        with psycopg.connect(self.server_url, autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{self.db_name}"')
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=self.env, check=True)
        celery = [sys.executable, "-m", "celery"]
        common = ["worker", "-l", "info", "--without-gossip", "--without-mingle"]
        gpu_env = {k: v for k, v in self.env.items() if k != "DJANGO_SETTINGS_MODULE"}  # no Django there
        for name in ("gpu1", "gpu2"):
            self._start(name, [*celery, "-A", "model_worker.worker.celery_app", *common, "-Q", "gpu", "-c", "1",
                               "-n", f"{name}@%h"], gpu_env)
        self._start("finish", [*celery, "-A", "explainer", *common, "-Q", "finish", "-c", "2", "-n", "finish@%h",
                               "-B", "-s", str(self.dir / "celerybeat-schedule")], self.env)
        for name in ("qa1", "qa2"):
            self._start(name, [*celery, "-A", "explainer", *common, "-Q", "qa", "-c", "1", "-n", f"{name}@%h"],
                        self.env)
        for web in self.webs:
            self._start(web.name, [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(web.port),
                                   "explainer.asgi:application"], self.env)
        want = {"gpu": 2, "finish": 1, "qa": 2}

        def ready(web: Web) -> bool:
            status, body = self.readyz(web)
            return status == 200 and body.get("workers") == want

        soak.wait_until(lambda: all(ready(w) for w in self.webs), 300,
                        "every process up (/readyz ready on both web processes, counting 2 gpu, 1 finish, 2 qa)")

    def _start(self, name: str, argv: list[str], env: dict) -> None:
        log = (self.dir / f"{name}.log").open("wb")
        self.procs[name] = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def kill(self, name: str) -> None:
        """SIGKILL a process and everything in its group (a Celery worker's pool children)."""
        proc = self.procs[name]
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)

    def readyz(self, web: Web) -> tuple[int, dict]:
        try:
            with urllib.request.urlopen(web.url + "/readyz", timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")
        except OSError:
            return 0, {}

    def metrics(self, web: Web) -> dict[str, float]:
        request = urllib.request.Request(web.url + "/metrics", headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
        return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                if line.startswith("explainer_") and " " in line}

    def query(self, sql: str, *args):
        with psycopg.connect(self.env["DATABASE_URL"]) as db:
            return db.execute(sql, args).fetchall()

    def active(self, generation_ids) -> int:
        """soak.settle's question: how many of these generations the database still calls active."""
        if not generation_ids:
            return 0
        return self.query("SELECT count(*) FROM explainer_generation WHERE id = ANY(%s::uuid[]) "
                          "AND status IN ('queued', 'running')", list(generation_ids))[0][0]

    def gpu_holding(self, generation_id: str) -> str | None:
        """Which GPU worker's child holds the generation's claim (its token names the child's pid)."""
        token = lifecycle.holder(self.r, generation_id)
        if token is None:
            return None
        pid = int(token.split(":")[1])
        for name in ("gpu1", "gpu2"):
            proc = self.procs[name]
            if pid == proc.pid or pid in soak._children(proc.pid):
                return name
        return None

    def spread(self) -> dict[str, dict[str, int]]:
        """Tasks each worker has run, by task name, as the workers themselves count them."""
        from celery import Celery

        app = Celery(broker=self.redis_url)
        stats = app.control.inspect(timeout=3).stats() or {}
        app.close()
        return {node.split("@")[0]: dict(answer.get("total", {})) for node, answer in stats.items()}

    def logs_naming(self, generation_id: str) -> dict[str, int]:
        """How many JSON log lines of each process name this generation."""
        found = {}
        for name in self.procs:
            count = 0
            for raw in (self.dir / f"{name}.log").read_text(errors="replace").splitlines():
                if raw.startswith("{") and f'"generation_id": "{generation_id}"' in raw:
                    count += 1
            if count:
                found[name] = count
        return found

    def stop(self, keep_logs: bool = False) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # what a stopped worker left in its group
            except ProcessLookupError:
                pass
        if self.redis_proc is not None:
            self.redis_proc.terminate()
            self.redis_proc.wait(10)
        try:
            with psycopg.connect(self.server_url, autocommit=True) as db:
                db.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
        except psycopg.Error as exc:
            print(f"could not drop {self.db_name}: {exc}", file=sys.stderr)
        if keep_logs:
            print(f"logs kept in {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


class Probes:
    """Asks /readyz of every web process twice a second, from a thread, until stopped."""

    def __init__(self, fleet: Fleet):
        self.fleet, self.seen, self.stopping = fleet, [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stopping.is_set():
            for web in self.fleet.webs:
                status, body = self.fleet.readyz(web)
                self.seen.append((time.monotonic(), web.name, status, (body.get("workers") or {}).get("gpu")))
            self.stopping.wait(0.5)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join()


async def spread(fleet: Fleet, report: list[str]) -> tuple[soak.Result, bool]:
    result = soak.Result("spread")
    await asyncio.gather(*(soak.learner(fleet.webs[i % 2], [soak.QUESTIONS[i % len(soak.QUESTIONS)]], result.asks)
                           for i in range(QUESTIONS)))
    await soak.settle(fleet, result)
    pages = sum(1 for a in result.asks if a.done_s is not None)
    # Every page's render check, before the workers are asked what they did.
    deadline = time.monotonic() + CHECKS_WAIT_S
    while time.monotonic() < deadline:
        checked = fleet.query("SELECT count(*) FROM explainer_rendercheck WHERE status <> 'pending'")[0][0]
        if checked >= pages:
            break
        await asyncio.sleep(1)
    counts = await asyncio.to_thread(fleet.spread)
    gpu = {n: c.get("model_worker.generate_page", 0) for n, c in counts.items() if n.startswith("gpu")}
    qa = {n: c.get("explainer.render_check", 0) for n, c in counts.items() if n.startswith("qa")}
    finish = {n: c.get("explainer.finish_generation", 0) for n, c in counts.items() if n == "finish"}
    spread_ok = len(gpu) == 2 and len(qa) == 2 and all(gpu.values()) and all(qa.values())
    report.append(f"spread: {QUESTIONS} questions over web1 and web2, {pages} pages, {checked} render checks")
    report.append("  gpu workers (pages written): " + ", ".join(f"{n} {c}" for n, c in sorted(gpu.items())))
    report.append("  qa workers (render checks):  " + ", ".join(f"{n} {c}" for n, c in sorted(qa.items())))
    report.append("  finish worker (pages recorded): " + ", ".join(f"{n} {c}" for n, c in sorted(finish.items())))
    report.append("  both workers of each kind took work" if spread_ok else "  NOT SPREAD: a worker took no work")
    result.note = f"gpu {sorted(gpu.values())}, qa {sorted(qa.values())}"
    return result, spread_ok


async def gpu_kill(fleet: Fleet, report: list[str]) -> tuple[soak.Result, bool]:
    result = soak.Result("gpu-kill")
    state: dict = {}

    def on_block(ask):
        if "victim" in state or ask.generation is None:
            return
        victim = fleet.gpu_holding(ask.generation)
        if victim is None:
            return
        state.update(victim=victim, ask=ask, at=time.monotonic())
        fleet.kill(victim)

    with Probes(fleet) as probes:
        await asyncio.gather(*(soak.learner(fleet.webs[i % 2], [f"[[slow]] {soak.QUESTIONS[(i + 2) % 8]}"],
                                            result.asks, on_block) for i in range(SLOW_QUESTIONS)))
        await soak.settle(fleet, result)
    ask, at = state.get("ask"), state.get("at")
    if ask is None:
        report.append("gpu-kill: no GPU worker was caught mid-page")
        return result, False
    after = [(t, web, status, gpu) for t, web, status, gpu in probes.seen if t >= at]
    ready = sum(1 for _, _, status, _ in probes.seen if status == 200)
    one_gpu = next((t - at for t, _, _, gpu in after if gpu == 1), None)
    delivered = ask.sent + ask.done_s - at if ask.done_s is not None else None
    survivor = "gpu2" if state["victim"] == "gpu1" else "gpu1"
    report.append(f"gpu-kill: {state['victim']} killed whole (SIGKILL to its process group) at the first block of "
                  f"generation {ask.generation}")
    report.append(f"  {sum(1 for a in result.asks if a.done_s is not None)} of {len(result.asks)} pages arrived; "
                  + (f"the killed one {delivered:.1f} s after the kill, written again by {survivor}"
                     if delivered is not None else "the killed one did not"))
    report.append(f"  /readyz during the kill: {len(probes.seen)} probes of web1 and web2, {ready} ready; live gpu "
                  "workers 2 -> 1 " + (f"{one_gpu:.1f} s after the kill" if one_gpu is not None else "(never seen)"))
    naming = fleet.logs_naming(ask.generation)
    report.append("  JSON log lines naming that generation: " + ", ".join(f"{n} {c}" for n, c in sorted(naming.items())))
    result.note = f"killed {state['victim']}; readyz {ready}/{len(probes.seen)} ready"
    ok = ready == len(probes.seen) and delivered is not None and one_gpu is not None
    return result, ok


async def last_gpu(fleet: Fleet, report: list[str]) -> bool:
    survivor = next(n for n in ("gpu1", "gpu2") if fleet.procs[n].poll() is None)
    before = [fleet.readyz(w)[0] for w in fleet.webs]
    fleet.kill(survivor)
    killed = time.monotonic()
    while time.monotonic() - killed < HEARTBEAT_TTL_S + 10:
        answers = [fleet.readyz(w) for w in fleet.webs]
        if all(status == 503 for status, _ in answers):
            report.append(f"last-gpu: {survivor} killed too: /readyz {before} -> 503 on both web processes "
                          f"{time.monotonic() - killed:.1f} s later (heartbeat TTL {HEARTBEAT_TTL_S} s): "
                          f"{json.dumps(answers[0][1])}")
            return before == [200, 200]
        await asyncio.sleep(0.25)
    report.append(f"last-gpu: /readyz still ready {HEARTBEAT_TTL_S + 10} s after the last GPU worker died")
    return False


def totals(fleet: Fleet, report: list[str]) -> bool:
    """The deployment's totals, from /metrics of each web process (the same numbers: they live in Redis)."""
    keys = ['explainer_generations_total{error_code="",outcome="done"}', 'explainer_pages_total{backend='
            '"DeterministicDenoiser"}', "explainer_render_check_seconds_count", 'explainer_router_decisions_total'
            '{decision="routed"}', "explainer_time_to_first_block_seconds_count", 'explainer_queue_depth{queue="gpu"}']
    seen = [fleet.metrics(web) for web in fleet.webs]
    for web, figures in zip(fleet.webs, seen, strict=True):
        report.append(f"  /metrics of {web.name}: " + ", ".join(f"{k} {figures.get(k, 0):g}" for k in keys))
    return all(seen[0].get(k) == seen[1].get(k) for k in keys)


async def main_async(fleet: Fleet) -> tuple[list[soak.Result], list[str], bool]:
    report: list[str] = []
    first, spread_ok = await spread(fleet, report)
    second, kill_ok = await gpu_kill(fleet, report)
    report.append("metrics (deployment-wide, kept in Redis):")
    same = await asyncio.to_thread(totals, fleet, report)
    readyz_ok = await last_gpu(fleet, report)
    return [first, second], report, spread_ok and kill_ok and readyz_ok and same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default=os.environ.get("FLEET_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres"),
                        help="a PostgreSQL server URL with the right to create databases")
    parser.add_argument("--keep-logs", action="store_true", help="keep every process's log (printed: where)")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        print("soak-fleet needs redis-server (make system)", file=sys.stderr)
        return 2
    fleet = Fleet(args.postgres)
    started = time.monotonic()
    try:
        fleet.start()
        status, body = fleet.readyz(fleet.webs[0])
        print(f"fleet up in {time.monotonic() - started:.0f} s: web1 :{fleet.webs[0].port}, web2 :{fleet.webs[1].port}, "
              f"gpu1, gpu2, finish (with the reaper), qa1, qa2; PostgreSQL {fleet.db_name}; Redis :{fleet.redis_port}")
        print(f"/readyz {status} {json.dumps(body)}", flush=True)
        results, report, ok = asyncio.run(main_async(fleet))
    finally:
        fleet.stop(keep_logs=args.keep_logs)
    print("\n".join(report))
    rows = [r.row() for r in results]
    soak.print_table(rows)
    lost = any(r["lost"] or r["stuck"] for r in rows)
    print(f"total {time.monotonic() - started:.0f} s: "
          + ("nothing lost or stuck" if not lost else "PAGES LOST OR STUCK") + "; "
          + ("every check passed" if ok else "A CHECK FAILED"))
    return 1 if lost or not ok else 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared fixtures: real Redis (database 15), real Celery workers, a live ASGI server, websocket clients.

Test modules must not import this file (pytest would register it a second time, hooks and all);
shared helpers live in tests/support/.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest
import redis
from django.conf import settings

from explainer.settings.base import caches, channel_layers
from model_worker.config import engine_settings, gpu_worker_pool
from tests.support.net import ROOT, TEST_BACKEND, free_port, listening

VENV_BIN = Path(sys.executable).parent
DISCONNECT_TIMEOUT_S = 10


def _wait_for(predicate, timeout: float, what: str, proc: subprocess.Popen | None = None, log: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise RuntimeError(f"{what} did not come up\n{tail}")


def _ensure_redis() -> str:
    """Database 15 of a Redis server of this test session's own, or of the one on REDIS_URL's port.

    Tests empty the database and share queues with worker processes; a private server keeps several
    test sessions on one machine from wiping each other's streams and queued tasks mid-test.
    """
    server = shutil.which("redis-server")
    if server is None:
        url = urlparse(settings.REDIS_URL)
        if listening(url.hostname or "127.0.0.1", url.port or 6379):
            return settings.REDIS_URL
        raise RuntimeError(f"no Redis listens on {url.netloc} and redis-server is not installed")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="explainer-redis-")
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    atexit.register(proc.terminate)
    _wait_for(lambda: listening("127.0.0.1", port), 10, "redis-server", proc)
    return f"redis://127.0.0.1:{port}/15"


def _use_redis(url: str) -> None:
    os.environ["REDIS_URL"] = url
    settings.REDIS_URL = url
    settings.CELERY_BROKER_URL = url
    settings.CHANNEL_LAYERS = channel_layers(url)
    settings.CACHES = caches(url)


def _own_test_database() -> None:
    """A test database of this session's own: two test sessions on one machine (a developer's and an editor's,
    say) would otherwise create, fill and drop the same one under each other. Workers the tests start are
    handed its name (`database_url`)."""
    db = settings.DATABASES["default"]
    test = db.setdefault("TEST", {})
    if db["ENGINE"].endswith("sqlite3"):
        test["NAME"] = str(Path(test.get("NAME") or db["NAME"]).with_name(f"test-db-{os.getpid()}.sqlite3"))
    else:
        test["NAME"] = f"test_{db['NAME']}_{os.getpid()}"


def pytest_configure(config):
    _use_redis(_ensure_redis())
    _own_test_database()
    if not settings.REDIS_URL.rstrip("/").endswith("/15"):
        raise RuntimeError(f"tests flush Redis; they only use database 15, not {settings.REDIS_URL}")


@pytest.fixture(autouse=True)
def redis_db():
    """Redis database 15, emptied before each test (Celery's queue bindings kept, so workers stay wired)."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    keys = [k for k in client.scan_iter(count=1000) if not k.startswith(b"_kombu.binding.")]
    if keys:
        client.delete(*keys)
    yield client
    client.close()


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    """Each test runs its own event loop; a channel layer bound to an earlier loop would refuse it."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def database_url() -> str:
    """A URL for the test database, for processes outside pytest (workers, the live server)."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = quote(db["USER"] or "") + (":" + quote(db["PASSWORD"]) if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def child_env(**extra) -> dict:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="explainer.settings.test",
        DATABASE_URL=database_url(),
        REDIS_URL=settings.REDIS_URL,
        MODEL_BACKEND=TEST_BACKEND,
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        ORPHAN_GRACE_S="0",
        # A lost worker lets go of its page in 6 s (not 15), and the reaper looks every 2 s, so the
        # lifecycle tests finish quickly.
        GENERATION_CLAIM_TTL_S="6",
        REAPER_INTERVAL_S="2",
    )
    env.update(extra)
    return env


class Children:
    """Processes a fixture started; each logs to a file that a failing start quotes."""

    def __init__(self, logdir: Path):
        self.logdir, self.procs = logdir, []

    def start(self, name: str, args: list[str], env: dict, ready) -> subprocess.Popen:
        log = self.logdir / f"{name}.log"
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
        self.procs.append(proc)
        _wait_for(lambda: ready(log), 90, name, proc, log)
        return proc

    def stop(self):
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


def _celery_ready(log: Path) -> bool:
    return log.exists() and b" ready." in log.read_bytes()


# Module scope: tests elsewhere rely on tasks staying on their queue with no worker to take them.
@pytest.fixture(scope="module")
def celery_workers(django_db_setup, django_db_blocker, tmp_path_factory, worker_env):
    """A real GPU worker (test denoiser unless `worker_env` says otherwise, no Django; a thread pool with
    MODEL_BATCH as runall starts it), a finish worker
    (with Celery beat: the reaper) and a qa worker, on Redis database 15."""
    logdir = tmp_path_factory.mktemp("workers")
    children = Children(logdir)
    celery = str(VENV_BIN / "celery")
    common = ["worker", "-l", "info", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with django_db_blocker.unblock():
        env = child_env(**worker_env)
    try:
        children.start("gpu", [celery, "-A", "model_worker.worker.celery_app", *common, "-Q", "gpu",
                               *gpu_worker_pool(engine_settings(env)), "-n", "gpu@%h"], env, _celery_ready)
        children.start("finish", [celery, "-A", "explainer", *common, "-Q", "finish", "-c", "1", "-n", "finish@%h",
                                  "-B", "-s", str(logdir / "celerybeat-schedule")], env, _celery_ready)
        children.start("qa", [celery, "-A", "explainer", *common, "-Q", "qa", "-c", "2", "-n", "qa@%h"],
                       env, _celery_ready)
        yield children
    finally:
        children.stop()


WORKERS = 3  # the gpu, finish and qa workers `celery_workers` starts


@pytest.fixture(autouse=True)
def workers_idle_before_flush(request, redis_db):
    """With real workers, wait at the end of a test until they hold no task before its database is
    emptied: a render check still writing while PostgreSQL truncates the tables deadlocks the flush."""
    if "celery_workers" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")  # set up first, so emptied after this waits
    yield
    from explainer.celery import app

    deadline = time.monotonic() + 60
    while True:
        inspect = app.control.inspect(timeout=1, limit=WORKERS)
        held = [t for answer in (inspect.active(), inspect.reserved()) for tasks in (answer or {}).values()
                for t in tasks]
        held = [t for t in held if t.get("name") != "explainer.reap_generations"]
        if not held and not any(redis_db.llen(queue) for queue in ("gpu", "finish", "qa")):
            return
        if time.monotonic() > deadline:
            warnings.warn(f"workers still hold {len(held)} task(s) as the test database is emptied", stacklevel=1)
            return
        time.sleep(0.1)


@pytest.fixture(scope="session")
def tiny_qwen_dir(tmp_path_factory) -> Path:
    """A tiny random Qwen3.5 causal LM folder with the demo tokenizer (built once per session)."""
    from tests.support.tiny_hf import save_tiny_qwen

    return save_tiny_qwen(tmp_path_factory.mktemp("tiny-qwen"))


@pytest.fixture(scope="session")
def tiny_diffusion_dir(tmp_path_factory) -> Path:
    """A tiny random DiffusionGemma block-diffusion folder with the demo tokenizer (built once per session)."""
    from tests.support.tiny_hf import save_tiny_diffusion_gemma

    return save_tiny_diffusion_gemma(tmp_path_factory.mktemp("tiny-diffusion"))


@pytest.fixture(scope="module")
def worker_env() -> dict:
    """Extra environment for the `celery_workers` processes; a test module overrides it to run another backend."""
    return {}


def _serve(tmp_path_factory, django_db_blocker, **env_extra):
    """The whole ASGI app (HTTP, static files, websockets) served by Daphne's runserver on a free port."""
    children = Children(tmp_path_factory.mktemp("server"))
    port = free_port()
    with django_db_blocker.unblock():
        env = child_env(**env_extra)
    try:
        # --nostatic: explainer.asgi serves static/ with the CORS header sandboxed pages' imports need.
        children.start("daphne", [sys.executable, "manage.py", "runserver", "--noreload", "--nostatic",
                                  f"127.0.0.1:{port}"], env, lambda _log: listening("127.0.0.1", port))
        yield f"http://127.0.0.1:{port}"
    finally:
        children.stop()


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker, tmp_path_factory):
    """The live app; a page nobody watches is cancelled at once (ORPHAN_GRACE_S=0)."""
    yield from _serve(tmp_path_factory, django_db_blocker)


@pytest.fixture(scope="module")
def patient_server_url(django_db_setup, django_db_blocker, tmp_path_factory):
    """The live app with the production habit of waiting for a viewer who dropped off (ORPHAN_GRACE_S=20)."""
    yield from _serve(tmp_path_factory, django_db_blocker, ORPHAN_GRACE_S="20")


@pytest.fixture(scope="module")
def short_links_server_url(django_db_setup, django_db_blocker, tmp_path_factory):
    """The live app with page links that expire after a minute, the shortest PAGE_LINK_TTL_S allows."""
    yield from _serve(tmp_path_factory, django_db_blocker, PAGE_LINK_TTL_S="60")


@pytest.fixture
def session_key(transactional_db) -> str:
    """A saved browser session, as the learner page gives every visitor."""
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session.create()
    return session.session_key


@pytest.fixture
async def connect(session_key):
    """Open `/ws/explain/` as the browser holding `session_key` (or another key); closes them afterwards."""
    from channels.testing import WebsocketCommunicator

    from explainer.asgi import application

    opened = []

    async def open_socket(key: str | None = None):
        headers = [(b"origin", b"http://127.0.0.1"), (b"cookie", f"sessionid={key or session_key}".encode())]
        communicator = WebsocketCommunicator(application, "/ws/explain/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        hello = await communicator.receive_json_from()
        assert hello["type"] == "hello"
        opened.append(communicator)
        return communicator

    yield open_socket
    for communicator in opened:
        if communicator.future.done():
            continue
        # A teardown that raised would leave later fixtures unfinalised (and their values reused), so a
        # slow close on a busy machine is waited for, and its failure only logged.
        try:
            await communicator.disconnect(timeout=DISCONNECT_TIMEOUT_S)
        except (Exception, asyncio.CancelledError) as exc:
            warnings.warn(f"websocket consumer did not close cleanly: {exc!r}", stacklevel=1)

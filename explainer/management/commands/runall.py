"""`manage.py runall`: Redis (when none listens), the Celery workers and the web server, in the foreground.

Workers: `gpu` (pages, no Django), `finish` (records how a page ended, and runs Celery beat, whose
only job is the reaper), `qa` (render checks). The Redis it starts appends every write to a file in
var/ (AOF), so queued work and live views survive a restart.

Ctrl-C (SIGINT) or SIGTERM stops every child: the workers and the web server together, then Redis; a
child still running 20 s after its SIGTERM is killed, and so is anything a stopped child left running in
its process group. If one child dies, the rest are stopped too.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from urllib.parse import urlparse

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from model_worker.config import gpu_worker_pool

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
STOP_SECONDS = 20  # how long a child may take to stop after SIGTERM before it is killed


class Command(BaseCommand):
    help = "Run the whole app in the foreground: Redis if needed, the gpu, finish and qa workers, and the web server."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--host", default="127.0.0.1")

    def handle(self, *args, port: int, host: str, **options):
        self.children: list[tuple[str, subprocess.Popen]] = []
        self.stopping = False
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        try:
            self._start_all(host, port)
            self.stdout.write(self.style.SUCCESS(f"Explainer is up at http://{host}:{port}/  (Ctrl-C stops it)"))
            exit_code = self._watch()
        finally:
            self._stop_all()
        if exit_code:
            sys.exit(exit_code)

    def _start_all(self, host: str, port: int) -> None:
        redis_url = settings.REDIS_URL
        self._ensure_redis(redis_url)
        env = {**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1"}
        env.setdefault("DJANGO_SETTINGS_MODULE", os.environ.get("DJANGO_SETTINGS_MODULE", "explainer.settings.dev"))
        celery = [sys.executable, "-m", "celery"]
        gpu_env = {k: v for k, v in env.items() if k != "DJANGO_SETTINGS_MODULE"}  # the GPU worker has no Django
        self._start("gpu worker", [*celery, "-A", "model_worker.worker.celery_app", "worker", "-Q", "gpu",
                                   *gpu_worker_pool(), "-n", "gpu@%h", "-l", "info", "--without-gossip", "--without-mingle"], gpu_env)
        settings.VAR_DIR.mkdir(exist_ok=True)
        self._start("finish worker", [*celery, "-A", "explainer", "worker", "-Q", "finish", "-c", "2",
                                      "-n", "finish@%h", "-l", "info", "--without-gossip", "--without-mingle",
                                      "-B", "-s", str(settings.VAR_DIR / "celerybeat-schedule")], env)
        self._start("qa worker", [*celery, "-A", "explainer", "worker", "-Q", "qa", "-c", "2",
                                  "-n", "qa@%h", "-l", "info", "--without-gossip", "--without-mingle"], env)
        if settings.DEBUG:
            # Daphne's runserver: ASGI with websockets. --nostatic: explainer.asgi serves static/ itself,
            # with the CORS header sandboxed pages need (runserver's own handler would answer without it).
            web = [sys.executable, "manage.py", "runserver", "--noreload", "--nostatic", f"{host}:{port}"]
        else:
            web = [sys.executable, "-m", "daphne", "-b", host, "-p", str(port), "explainer.asgi:application"]
        self._start("web server", web, env)

    def _ensure_redis(self, redis_url: str) -> None:
        url = urlparse(redis_url)
        host, port = url.hostname or "127.0.0.1", url.port or 6379
        if url.scheme == "unix" or _listening(host, port):
            return
        if host not in LOCAL_HOSTS:
            raise CommandError(f"Redis at {host}:{port} (REDIS_URL) does not answer")
        server = shutil.which("redis-server")
        if server is None:
            raise CommandError(f"nothing listens on {host}:{port} and redis-server is not installed "
                               "(apt-get install redis-server, or set REDIS_URL)")
        settings.VAR_DIR.mkdir(exist_ok=True)
        self._start("redis", redis_argv(server, port, settings.VAR_DIR), dict(os.environ))
        deadline = time.monotonic() + 10
        while not _listening(host, port):
            if time.monotonic() > deadline:
                raise CommandError(f"redis-server did not start listening on {port}")
            time.sleep(0.1)

    def _start(self, name: str, argv: list[str], env: dict) -> None:
        self.stdout.write(f"starting {name}: {' '.join(argv)}")
        # Own session: Ctrl-C reaches only this command, which then stops the children in order.
        proc = subprocess.Popen(argv, env=env, cwd=settings.BASE_DIR, start_new_session=True)
        self.children.append((name, proc))

    def _watch(self) -> int:
        while not self.stopping:
            for name, proc in self.children:
                code = proc.poll()
                if code is not None:
                    self.stderr.write(self.style.ERROR(f"{name} exited with code {code}; stopping the rest"))
                    return 1
            time.sleep(0.5)
        return 0

    def _on_signal(self, signum, frame) -> None:
        self.stopping = True

    def _stop_all(self) -> None:
        # Everything but Redis at once, under one deadline, so a slow child cannot hold up the others;
        # Redis last, so the workers finish talking to the broker before it goes.
        running = [(name, proc) for name, proc in reversed(self.children) if proc.poll() is None]
        broker = [(name, proc) for name, proc in running if name == "redis"]
        self._stop([(name, proc) for name, proc in running if name != "redis"])
        self._stop(broker)
        self.children = []

    def _stop(self, children: list[tuple[str, subprocess.Popen]]) -> None:
        for name, proc in children:
            self.stdout.write(f"stopping {name}")
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for name, proc in children:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.stderr.write(f"{name} did not stop within {STOP_SECONDS} s; killed")
                proc.kill()
                proc.wait()
            _kill_leftovers(proc.pid)


def _kill_leftovers(group: int) -> None:
    """Kill whatever still runs in a stopped child's process group: processes it started and left behind
    (a worker's pool process forked while it was still starting up, say), which would otherwise run on
    and keep the terminal's output open after runall has returned."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is empty: the child took everything it started with it


def redis_argv(server: str, port: int, directory) -> list[str]:
    """A loopback redis-server that persists every write (AOF, fsync each second) in `directory`."""
    return [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
            "--appendfsync", "everysec", "--appendfilename", f"redis-{port}.aof", "--dir", str(directory)]


def _listening(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0

"""`/healthz`, `/readyz` and `/metrics`: cheap, no sign-in, nothing secret; `/readyz` is ready only with the
database, Redis and a live worker on every queue, and a worker that stops turns it not ready once its
heartbeat lapses; `/metrics` answers only the allowed addresses or the token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from model_worker.contract import workers
from tests.support.net import ROOT, TEST_BACKEND, free_port

pytestmark = pytest.mark.django_db

ALL_QUEUES = ["gpu", "finish", "qa"]


def test_healthz_answers_without_a_session_or_a_known_host():
    response = Client().get("/healthz", HTTP_HOST="10.0.3.7:8000")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "Set-Cookie" not in response.headers
    assert response["Cache-Control"] == "no-store"


def test_readyz_is_not_ready_without_workers_and_says_which_queue_has_none(redis_db):
    workers.beat(redis_db, ["finish", "qa"], "web-side@host:1")

    response = Client().get("/readyz")

    assert response.status_code == 503
    assert response.json() == {"status": "not ready", "web": "ok", "database": "ok", "redis": "ok",
                               "workers": {"gpu": 0, "finish": 1, "qa": 1}}


def test_readyz_is_ready_with_a_live_worker_on_every_queue_and_names_none_of_them(redis_db):
    workers.beat(redis_db, ["gpu"], "gpu@secret-host:11")
    workers.beat(redis_db, ["gpu"], "gpu@secret-host:12")
    workers.beat(redis_db, ["finish", "qa"], "web@secret-host:13")

    response = Client().get("/readyz", HTTP_HOST="10.0.3.7")

    assert response.status_code == 200
    assert response.json() == {"status": "ready", "web": "ok", "database": "ok", "redis": "ok",
                               "workers": {"gpu": 2, "finish": 1, "qa": 1}}
    assert b"secret-host" not in response.content and b"redis://" not in response.content


def test_readyz_says_redis_is_down_when_it_does_not_answer(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/15"

    response = Client().get("/readyz")

    assert response.status_code == 503
    assert response.json() == {"status": "not ready", "web": "ok", "database": "ok", "redis": "down",
                               "workers": None}


def test_readyz_says_the_database_is_down_when_it_does_not_answer(redis_db, monkeypatch):
    from django.db import OperationalError, connection

    workers.beat(redis_db, ALL_QUEUES, "all@host:1")

    def refuse(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", refuse)
    response = Client().get("/readyz")

    assert response.status_code == 503
    assert response.json()["database"] == "down"


def test_readyz_is_not_ready_while_the_process_builds_its_library_index(redis_db, monkeypatch):
    import threading

    from explainer import warmup

    workers.beat(redis_db, ALL_QUEUES, "all@host:1")
    building = threading.Event()
    monkeypatch.setattr(warmup, "_thread", threading.Thread(target=building.wait, daemon=True))
    warmup._thread.start()

    warming = Client().get("/readyz")
    building.set()
    warmup._thread.join()
    warm = Client().get("/readyz")

    assert (warming.status_code, warming.json()["web"]) == (503, "warming up")
    assert (warm.status_code, warm.json()["web"]) == (200, "ok")


def test_probes_take_no_writes():
    assert Client().post("/readyz").status_code == 405


def test_metrics_answer_an_allowed_address_in_prometheus_text_format():
    response = Client().get("/metrics", REMOTE_ADDR="127.0.0.1")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    body = response.content.decode()
    assert 'explainer_queue_depth{queue="gpu"} 0.0' in body
    assert "# TYPE explainer_generations_total counter" in body
    assert "django_http_requests_total_by_method" in body or "django_http_requests_before" in body


def test_metrics_refuse_an_address_outside_the_allowed_networks_without_the_token(settings):
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    settings.METRICS_TOKEN = "s3cret-token"

    assert Client().get("/metrics", REMOTE_ADDR="192.0.2.9").status_code == 403
    assert Client().get("/metrics", REMOTE_ADDR="192.0.2.9", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert Client().get("/metrics", REMOTE_ADDR="10.2.3.4").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="192.0.2.9",
                        HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200


def test_production_serves_metrics_to_no_address_unless_told():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "explainer.settings.prod", "SECRET_KEY": "x" * 50,
           "ALLOWED_HOSTS": "example.org", "DATABASE_URL": "sqlite:///tmp.sqlite3"}
    env.pop("METRICS_ALLOWED_NETWORKS", None)
    code = "import django; django.setup(); from django.conf import settings as s; print(s.METRICS_ALLOWED_NETWORKS)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"
    env["METRICS_ALLOWED_NETWORKS"] = "10.0.0.0/8, fe80::/10"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "['10.0.0.0/8', 'fe80::/10']"
    env["METRICS_ALLOWED_NETWORKS"] = "the office"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert "METRICS_ALLOWED_NETWORKS: 'the office' is not an address or network" in done.stderr


def _gpu_worker(tmp_path: Path, ttl_s: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}  # the GPU worker has no Django
    env.update(REDIS_URL=settings.REDIS_URL, MODEL_BACKEND=TEST_BACKEND, WORKER_HEARTBEAT_TTL_S=str(ttl_s),
               PYTHONPATH=str(ROOT))
    celery = str(Path(sys.executable).with_name("celery"))
    log = tmp_path / "gpu.log"
    return subprocess.Popen([celery, "-A", "model_worker.worker.celery_app", "worker", "-Q", "gpu", "-c", "1",
                             "-n", "gpu-probe@%h", "-l", "info", "--without-gossip", "--without-mingle",
                             "--without-heartbeat"], cwd=ROOT, env=env, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def _wait_for_status(status: int, timeout: float) -> float:
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        if Client().get("/readyz").status_code == status:
            return time.monotonic() - began
        time.sleep(0.2)
    raise AssertionError(f"/readyz did not answer {status} within {timeout} s: {Client().get('/readyz').json()}")


def test_a_gpu_worker_killed_turns_readyz_not_ready_once_its_heartbeat_lapses(redis_db, tmp_path):
    ttl_s = 3
    redis_db.delete(workers.key("gpu"))
    workers.beat(redis_db, ["finish", "qa"], "web-side@host:1", ttl_s=600)
    worker = _gpu_worker(tmp_path, ttl_s)
    try:
        _wait_for_status(200, 90)  # its first beat, once it is up
        assert Client().get("/readyz").json()["workers"]["gpu"] == 1

        os.killpg(worker.pid, signal.SIGKILL)  # no warm shutdown: nothing removes its entry
        worker.wait(10)
        lapsed_in = _wait_for_status(503, ttl_s + 5)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)

    assert lapsed_in <= ttl_s + 1
    assert Client().get("/readyz").json()["workers"] == {"gpu": 0, "finish": 1, "qa": 1}


def test_a_gpu_worker_stopped_cleanly_leaves_readiness_at_once(redis_db, tmp_path):
    redis_db.delete(workers.key("gpu"))
    workers.beat(redis_db, ["finish", "qa"], "web-side@host:1", ttl_s=600)
    worker = _gpu_worker(tmp_path, ttl_s=60)
    try:
        _wait_for_status(200, 90)
        worker.send_signal(signal.SIGTERM)  # Celery's warm shutdown
        worker.wait(30)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)

    assert Client().get("/readyz").json()["workers"]["gpu"] == 0  # not 60 s later: at once

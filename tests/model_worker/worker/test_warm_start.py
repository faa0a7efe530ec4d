"""The GPU worker loads its backend when it starts, so the first learner does not wait for the load."""

import os
import time
from pathlib import Path

import pytest
from django.conf import settings

from model_worker.config import engine_settings, gpu_worker_pool
from tests.conftest import VENV_BIN, Children, _celery_ready
from tests.support.net import ROOT, TEST_BACKEND


def start_gpu_worker(tmp_path: Path, **env_extra) -> tuple[Children, Path]:
    """A real gpu worker, up, on a Redis database of its own (no task can reach it)."""
    env = {**os.environ, "MODEL_BACKEND": TEST_BACKEND, "PYTHONPATH": str(ROOT),
           "REDIS_URL": settings.REDIS_URL.rsplit("/", 1)[0] + "/13", **env_extra}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    children = Children(tmp_path)
    args = [str(VENV_BIN / "celery"), "-A", "model_worker.worker.celery_app", "worker", "-l", "info", "-Q", "gpu",
            "--without-gossip", "--without-mingle", "--without-heartbeat", *gpu_worker_pool(engine_settings(env)),
            "-n", f"warm-{time.monotonic_ns()}@%h"]
    children.start("gpu", args, env, _celery_ready)
    return children, tmp_path / "gpu.log"


def logged_within(log: Path, text: bytes, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in log.read_bytes():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("batch", ["1", "2"], ids=["one-process", "thread-pool"])
def test_the_gpu_worker_loads_its_backend_before_any_page_is_asked(tmp_path, batch):
    children, log = start_gpu_worker(tmp_path, MODEL_BATCH=batch)
    try:
        assert logged_within(log, b"loading page backend", 30), log.read_text()
        assert b"Task model_worker.generate_page" not in log.read_bytes()  # no page asked: the load came from the start
        assert log.read_bytes().count(b"loading page backend") == 1  # one load, in the process that runs pages
    finally:
        children.stop()


def test_a_backend_that_cannot_load_is_logged_at_start_and_the_worker_stays_up(tmp_path):
    children, log = start_gpu_worker(tmp_path, MODEL_BACKEND="clover", MODEL_PATH=str(tmp_path / "no-checkpoint"))
    try:
        assert logged_within(log, b"the page backend could not be loaded", 60), log.read_text()
        assert children.procs[0].poll() is None  # it keeps taking pages, each told why it cannot be written
    finally:
        children.stop()

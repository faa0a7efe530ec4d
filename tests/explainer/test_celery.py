"""The finish worker's log shows what happens, not the reaper's routine run every few seconds."""

import logging
import time

from django.conf import settings

from explainer.celery import QuietReaper
from tests.conftest import VENV_BIN, Children, _celery_ready, child_env


def record(message: str, level: int = logging.INFO) -> logging.LogRecord:
    return logging.LogRecord("celery.app.trace", level, __file__, 1, message, None, None)


def test_routine_reaper_lines_are_dropped_and_a_reaper_run_that_acts_is_kept():
    quiet = QuietReaper()
    assert not quiet.filter(record("Scheduler: Sending due task reap-generations (explainer.reap_generations)"))
    assert not quiet.filter(record("Task explainer.reap_generations[1f2e] received"))
    assert not quiet.filter(record("Task explainer.reap_generations[1f2e] succeeded in 0.003s: 0"))
    assert quiet.filter(record("Task explainer.reap_generations[1f2e] succeeded in 0.004s: 2"))
    assert quiet.filter(record("Task explainer.reap_generations[1f2e] raised: OperationalError", logging.ERROR))
    assert quiet.filter(record("Task explainer.finish_generation[9a] succeeded in 0.1s: None"))


def test_a_finish_worker_running_the_reaper_every_second_logs_none_of_its_routine_runs(
        tmp_path, transactional_db, django_db_blocker):
    with django_db_blocker.unblock():
        env = child_env(REAPER_INTERVAL_S="1", REDIS_URL=settings.REDIS_URL.rsplit("/", 1)[0] + "/12")
    children = Children(tmp_path)
    try:
        children.start("finish", [str(VENV_BIN / "celery"), "-A", "explainer", "worker", "-l", "info", "-Q", "finish",
                                  "-c", "1", "--without-gossip", "--without-mingle", "--without-heartbeat",
                                  "-n", f"quiet-{time.monotonic_ns()}@%h", "-B", "-s", str(tmp_path / "beat-schedule")],
                       env, _celery_ready)
        time.sleep(4)  # four reaper runs
    finally:
        children.stop()
    log = tmp_path / "finish.log"
    text = log.read_text()
    assert "beat: Starting" in text  # beat ran in this worker
    assert "reap_generations" not in text.split(" ready.", 1)[1]

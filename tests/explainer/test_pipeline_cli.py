"""`manage.py explain` writes a page and prints JSON stats; `manage.py runall` stops everything together."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest
from django.core.management import CommandError, call_command

from model_worker.contract.pages import PageRequest
from tests.support.denoiser import page_for
from tests.support.library import nearest_page
from tests.support.net import ROOT, TEST_BACKEND, free_port, listening


def test_explain_writes_the_page_and_prints_its_stats(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MODEL_BACKEND", TEST_BACKEND)
    out = tmp_path / "page.html"
    call_command("explain", "海水为什么每天涨潮落潮？", "--lang", "zh", "-o", str(out), "--no-check")
    stats = json.loads(capsys.readouterr().out)
    # Routed to the tides topic's page in the asked language, which the backend writes.
    assert stats["source"] == "model" and stats["topic"]["slug"] == "zh-tides"
    assert out.read_text(encoding="utf-8") == page_for(PageRequest(question="海水为什么每天涨潮落潮？", lang="zh"))
    assert stats["tokens"] > 0 and stats["forwards"] > 0 and stats["seconds"] > 0
    assert stats["tokens_per_forward"] == pytest.approx(stats["tokens"] / stats["forwards"], abs=0.01)
    assert stats["render_check"] is None


@pytest.mark.browser
def test_explain_reports_the_render_check_result(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MODEL_BACKEND", TEST_BACKEND)
    call_command("explain", "Why is the sky blue?", "-o", str(tmp_path / "page.html"))
    check = json.loads(capsys.readouterr().out)["render_check"]
    assert isinstance(check["passed"], bool)
    assert check["checks"]["ready"] is True and check["checks"]["errors"] is True


def test_explain_refuses_an_empty_question_and_a_missing_checkpoint(tmp_path, monkeypatch):
    with pytest.raises(CommandError, match="Type a question"):
        call_command("explain", "  ", "-o", str(tmp_path / "x.html"))
    monkeypatch.setenv("MODEL_BACKEND", "model_worker.backends.clover:CloverBackend")
    monkeypatch.setenv("MODEL_PATH", str(tmp_path / "missing"))
    with pytest.raises(CommandError, match="could not be loaded"):
        call_command("explain", "Why does the sea have tides?", "-o", str(tmp_path / "x.html"))
    assert not (tmp_path / "x.html").exists()


def test_explain_refuses_a_topic_the_library_lacks_naming_the_nearest(tmp_path, capsys):
    nearest = nearest_page("How does a refrigerator keep food cold?").slug
    with pytest.raises(CommandError, match=f"no library topic fits.*nearest: {nearest}"):
        call_command("explain", "How does a refrigerator keep food cold?", "-o", str(tmp_path / "x.html"))
    assert not (tmp_path / "x.html").exists()


def test_explain_answers_a_page_the_checkpoint_never_learned_with_the_library_page(tmp_path, capsys):
    out = tmp_path / "page.html"
    call_command("explain", "彩虹是怎么形成的？", "--lang", "zh", "-o", str(out), "--no-check")
    stats = json.loads(capsys.readouterr().out)
    assert stats["source"] == "library" and stats["topic"]["slug"] == "zh-rainbow"
    assert "<title>彩虹和光的色散</title>" in out.read_text(encoding="utf-8")


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "a child dies"])
def test_runall_starts_everything_and_stops_every_child(tmp_path, how):
    port, redis_port = free_port(), free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "explainer.settings.dev", "MODEL_BACKEND": TEST_BACKEND,
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
           "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    proc = subprocess.Popen([sys.executable, "manage.py", "runall", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while not listening("127.0.0.1", port) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert listening("127.0.0.1", port), "the web server never listened"
        assert listening("127.0.0.1", redis_port), "runall started no Redis though none listened"
        children = _children(proc.pid)
        assert len(children) == 5  # redis, gpu worker, finish worker (with beat), qa worker, web server
        if how == "ctrl-c":
            proc.send_signal(signal.SIGINT)
        else:
            os.kill(children[-1], signal.SIGKILL)  # the web server dies
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not [pid for pid in children if _alive(pid)]
    assert not listening("127.0.0.1", port) and not listening("127.0.0.1", redis_port)
    if how == "a child dies":
        assert proc.returncode == 1
        assert "web server exited" in output
    else:
        assert proc.returncode == 0


def test_runall_kills_what_a_stopped_child_left_running(monkeypatch):
    from explainer.management.commands import runall

    monkeypatch.setattr(runall, "STOP_SECONDS", 1)
    # A child whose own process stops at once on SIGTERM, leaving behind one it started that ignores it
    # (as a worker killed while starting up leaves its pool processes).
    script = "sh -c \"trap '' TERM; while true; do sleep 0.1; done\" & wait"
    child = subprocess.Popen(["bash", "-c", script], start_new_session=True, stdout=subprocess.PIPE)
    command = runall.Command()
    command.children = [("gpu worker", child)]
    time.sleep(0.3)  # the grandchild is up, with its trap set
    grandchildren = _children(child.pid)
    assert grandchildren
    try:
        command._stop_all()
        assert child.returncode == -signal.SIGTERM
        # The child's output closes: nothing is left holding it open.
        assert select.select([child.stdout], [], [], 5)[0] and child.stdout.read() == b""
        assert not [pid for pid in grandchildren if _alive(pid)]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)


def test_runall_stops_its_children_together_and_kills_one_that_ignores_sigterm(monkeypatch, capsys):
    from explainer.management.commands import runall

    monkeypatch.setattr(runall, "STOP_SECONDS", 1)
    stubborn = "trap '' TERM; while true; do sleep 0.1; done"  # a child that does not stop on SIGTERM
    command = runall.Command()
    command.children = [(name, subprocess.Popen(["bash", "-c", script], start_new_session=True))
                        for name, script in [("redis", "sleep 60"), ("gpu worker", stubborn),
                                             ("qa worker", stubborn), ("web server", "sleep 60")]]
    procs = dict(command.children)
    time.sleep(0.3)  # the traps are set
    started = time.monotonic()
    command._stop_all()
    elapsed = time.monotonic() - started
    # Both stubborn workers waited out one shared deadline, not one each; Redis stopped after them.
    assert elapsed < 2 * runall.STOP_SECONDS + 1.5
    assert procs["gpu worker"].returncode == procs["qa worker"].returncode == -signal.SIGKILL
    assert procs["web server"].returncode == procs["redis"].returncode == -signal.SIGTERM
    assert command.children == []
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["stopping web server", "stopping qa worker", "stopping gpu worker", "stopping redis"]

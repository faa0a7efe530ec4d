"""LOG_FORMAT=json: one JSON object a line, naming the generation a line is about, in either tier."""

from __future__ import annotations

import contextvars
import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from celery.signals import task_postrun, task_prerun

from model_worker.contract import logs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def json_logger():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonLines())
    handler.addFilter(logs.GenerationFilter())
    logger = logging.getLogger("tests.json-lines")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def lines(stream) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_line_inside_a_generation_names_it_and_a_line_outside_names_none(json_logger):
    logger, stream = json_logger

    def log_inside_then_outside():
        with logs.generation("6c1f0e7a-0000-4000-8000-000000000001"):
            logger.info("writing %s", "块 1")
        logger.warning("idle")

    # In an empty context, as a fresh thread starts: a task an earlier test ran in this thread named its own.
    contextvars.Context().run(log_inside_then_outside)

    inside, outside = lines(stream)
    assert inside["generation_id"] == "6c1f0e7a-0000-4000-8000-000000000001"
    assert inside["message"] == "writing 块 1" and inside["level"] == "INFO" and inside["logger"] == "tests.json-lines"
    assert {"time", "process"} <= set(inside)
    assert "generation_id" not in outside and outside["level"] == "WARNING"


def test_a_failure_keeps_its_traceback_in_the_line(json_logger):
    logger, stream = json_logger
    try:
        raise ValueError("bad page")
    except ValueError:
        logger.exception("generation failed")

    [line] = lines(stream)
    assert "ValueError: bad page" in line["exc_info"]


def test_a_celery_task_of_a_generation_names_it_until_the_task_ends(json_logger):
    logger, stream = json_logger
    logs.celery_logging(frozenset({"tests.some_generation_task"}))

    class Task:
        name = "tests.some_generation_task"

    class Other:
        name = "tests.render"

    task_prerun.send(sender=None, task_id="t1", task=Task(), args=["gen-1", {}])
    logger.info("in the task")
    task_postrun.send(sender=None, task_id="t1", task=Task())
    task_prerun.send(sender=None, task_id="t2", task=Other(), args=[42])
    logs.about("gen-2")  # the render check names its page's generation once it knows it
    logger.info("checking")
    task_postrun.send(sender=None, task_id="t2", task=Other())
    logger.info("after")

    assert [line.get("generation_id") for line in lines(stream)] == ["gen-1", "gen-2", None]


def test_the_web_tier_writes_json_lines_when_asked():
    code = ("import django, logging; django.setup(); from model_worker.contract import logs\n"
            "with logs.generation('g-7'):\n    logging.getLogger('explainer.x').warning('queued')")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "explainer.settings.test", "LOG_FORMAT": "json"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    [line] = [json.loads(raw) for raw in done.stderr.splitlines() if raw.startswith("{")]
    assert (line["message"], line["generation_id"], line["logger"]) == ("queued", "g-7", "explainer.x")


def test_an_unknown_log_format_stops_start_up_naming_it():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "explainer.settings.test", "LOG_FORMAT": "yaml"}
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0 and "LOG_FORMAT='yaml' must be one of text, json" in done.stderr

"""A mistyped number in the worker's environment stops it at start-up with a message naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from model_worker.config.environment import env_number

ROOT = Path(__file__).resolve().parents[2]


def test_a_number_is_read_and_an_unset_or_empty_variable_gives_the_default():
    assert env_number("X", 15, environ={"X": " 30 "}) == 30
    assert env_number("X", 15, environ={}) == 15
    assert env_number("X", 15, environ={"X": ""}) == 15
    assert env_number("X", None, float, environ={"X": "2.5"}) == 2.5


@pytest.mark.parametrize(("raw", "message"), [
    ("soon", "X='soon' is not a whole number"),
    ("1.5", "X='1.5' is not a whole number"),
    ("0", "X=0 must be at least 1"),
])
def test_a_bad_value_names_the_variable(raw, message):
    with pytest.raises(ValueError, match=message):
        env_number("X", 15, minimum=1, environ={"X": raw})


@pytest.mark.parametrize(("module", "name", "raw", "message"), [
    ("model_worker.contract.lifecycle", "GENERATION_CLAIM_TTL_S", "15s", "GENERATION_CLAIM_TTL_S='15s' is not a whole number"),
    ("model_worker.contract.lifecycle", "GENERATION_CLAIM_TTL_S", "1", "GENERATION_CLAIM_TTL_S=1 must be at least 3"),
    ("model_worker.worker.tasks", "GENERATION_SOFT_LIMIT_S", "ten minutes",
     "GENERATION_SOFT_LIMIT_S='ten minutes' is not a whole number"),
])
def test_the_worker_refuses_to_start_on_a_bad_limit(module, name, raw, message):
    env = {**os.environ, "PYTHONPATH": str(ROOT), name: raw}
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == f"ValueError: {message}"

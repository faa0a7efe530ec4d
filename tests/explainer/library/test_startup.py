"""An empty or corrupt library stops the app at start-up, naming the file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from model_worker.corpus import CORPUS_DIR
from tests.support.net import ROOT


def start(library_dir) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "explainer.settings.test", "LIBRARY_DIR": str(library_dir)}
    return subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_an_empty_library_refuses_to_start(tmp_path):
    (tmp_path / "pages").mkdir()
    run = start(tmp_path)
    assert run.returncode != 0
    assert "ImproperlyConfigured" in run.stderr and "is empty" in run.stderr and str(tmp_path / "pages") in run.stderr


def test_a_corrupt_page_record_refuses_to_start_naming_the_file(tmp_path):
    shutil.copytree(CORPUS_DIR / "pages", tmp_path / "pages")
    (tmp_path / "pages" / "tides.json").write_text('{"slug": "tides", ', encoding="utf-8")
    run = start(tmp_path)
    assert run.returncode != 0
    assert "tides.json" in run.stderr and "corrupt" in run.stderr


def test_the_shipped_library_starts():
    assert start(CORPUS_DIR).returncode == 0

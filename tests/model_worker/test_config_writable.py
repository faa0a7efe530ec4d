"""What a library-only checkpoint can write is read from its training.json, without torch."""

from __future__ import annotations

import json

from model_worker.config import engine_settings, writable_topics
from tests.support.net import OPEN_DOMAIN_TEST_BACKEND


def test_the_demo_checkpoint_writes_only_the_pages_it_was_trained_on():
    pages = writable_topics(engine_settings({}))
    assert pages and "tides" in pages and "zh-buoyancy" in pages
    assert "zh-sky-blue" not in pages  # a lesson added after it was trained


def test_a_checkpoint_without_a_page_list_and_an_open_domain_backend_promise_no_limit(tmp_path):
    assert writable_topics(engine_settings({"MODEL_PATH": str(tmp_path)})) is None
    (tmp_path / "training.json").write_text(json.dumps({"pages": ["tides"]}), encoding="utf-8")
    assert writable_topics(engine_settings({"MODEL_PATH": str(tmp_path)})) == {"tides"}
    assert writable_topics(engine_settings({"MODEL_BACKEND": OPEN_DOMAIN_TEST_BACKEND})) is None

"""Backends declare what they can do; the web side reads it without loading a model or importing torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from model_worker.config import DEFAULT_BACKEND, backend_capabilities, engine_settings
from model_worker.contract.pages import LIBRARY_ONLY, BackendCapabilities, PageRequest
from tests.support.net import OPEN_DOMAIN_TEST_BACKEND, ROOT, TEST_BACKEND


def test_reading_the_default_backends_capabilities_imports_no_torch():
    code = ("import sys; from model_worker.config import backend_capabilities, engine_settings; "
            "c = backend_capabilities(engine_settings({})); print(c.open_domain, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_the_demo_backend_declares_itself_library_only_as_the_lookup_says():
    from model_worker.backends.clover import CloverBackend

    assert CloverBackend.capabilities == backend_capabilities(engine_settings({"MODEL_BACKEND": DEFAULT_BACKEND}))
    assert not CloverBackend.capabilities.open_domain


def test_other_backends_are_read_from_their_class_and_undeclared_ones_are_library_only():
    assert backend_capabilities(engine_settings({"MODEL_BACKEND": OPEN_DOMAIN_TEST_BACKEND})).open_domain
    assert backend_capabilities(engine_settings({"MODEL_BACKEND": TEST_BACKEND})) == LIBRARY_ONLY
    with pytest.raises(ImportError):
        backend_capabilities(engine_settings({"MODEL_BACKEND": "no.such.module:Backend"}))


def test_a_capability_declaration_checks_its_stream_kind():
    with pytest.raises(ValueError):
        BackendCapabilities(streams="words")


@pytest.mark.parametrize("fields", [
    {"question": ""}, {"question": "   "}, {"question": 5}, {"question": "Why?", "lang": "fr"},
    {"question": "Why?", "topic": 3}, {"question": "Why?", "previous_page": ["<html>"]},
    {"question": "Why?", "repair": {"page": "<html>", "errors": []}},
])
def test_a_page_request_that_a_worker_could_not_run_cannot_be_made(fields):
    with pytest.raises(ValueError):
        PageRequest(**fields)

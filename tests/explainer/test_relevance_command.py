"""`manage.py relevance` reports the router's figures on the question set, and checks generated pages."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from tests.support.net import TEST_BACKEND


def relevance(*args) -> dict:
    out = io.StringIO()
    call_command("relevance", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_the_router_figures_count_every_question_of_the_set():
    report = relevance()
    router = report["router"]
    assert (router["in_library"], router["out_of_library"]) == (83, 30)
    assert router["out_of_library_routed"] == 0 and router["refused_out_of_library"] == 1.0
    assert router["routed_right"] <= router["routed"] and 0 < router["recall"] <= router["precision"] <= 1
    assert report["calibrated_threshold"] == router["threshold"]
    assert len(report["misses"]) == router["in_library"] - router["routed_right"]


@pytest.mark.django_db
def test_generate_writes_routed_pages_through_the_backend_and_checks_them(monkeypatch, tmp_path):
    monkeypatch.setenv("MODEL_BACKEND", TEST_BACKEND)
    questions = tmp_path / "set.json"
    questions.write_text(json.dumps({"questions": [
        {"lang": "en", "question": "What makes the daytime sky look blue?", "expected": "sky-blue"},
        {"lang": "en", "question": "Why do cats purr?", "expected": None},
    ]}), encoding="utf-8")
    generation = relevance("--generate", "--questions", str(questions))["generation"]
    # The test denoiser titles its page with the question, not the library page: off topic, right language.
    assert generation | {"seconds": 0} == {
        "in_library": 1, "pages": 1, "on_topic": 0, "promised_language": 1, "asked_language": 1, "failed": 0,
        "out_of_library": 1, "refused": 1, "answered_other_topic": 0, "seconds": 0, "backend": TEST_BACKEND,
    }


def test_a_malformed_question_set_is_named(tmp_path):
    from django.core.management.base import CommandError

    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(CommandError, match="bad.json"):
        relevance("--questions", str(bad))

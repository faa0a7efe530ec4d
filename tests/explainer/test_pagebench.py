"""`manage.py pagebench` on a handful of questions, asked of the recorded capable model through the `openai`
backend: every page render-checked in Chromium and scored, a table or JSON, and a report that stands alone."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.support.recorded_model import MODEL, RecordedModel

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "pagebench_questions.json"

pytestmark = [pytest.mark.browser, pytest.mark.django_db]


def test_pagebench_scores_each_page_of_a_capable_model_and_writes_a_self_contained_report(monkeypatch, tmp_path):
    with RecordedModel() as server:
        monkeypatch.setenv("MODEL_BACKEND", "openai")
        monkeypatch.setenv("MODEL_BASE_URL", server.base_url)
        monkeypatch.setenv("MODEL_NAME", MODEL)
        out = StringIO()
        call_command("pagebench", "--questions", str(QUESTIONS), "--json", "--report", str(tmp_path), stdout=out,
                     stderr=StringIO())
    result = json.loads(out.getvalue())
    rows = {row["id"]: row for row in result["rows"]}
    assert [r["kind"] for r in server.requests] == ["ask", "ask", "follow_up"]
    for row in rows.values():
        assert (row["status"], row["source"], row["passed"]) == ("done", "model", True), row["summary"]
        items = row["checklist"]["items"]
        assert items["renders"] and items["scene"] and items["language"] and items["accessible"] and items["steps"]
        assert row["stats"]["tokens"] > 2000 and row["stats"]["seconds"] > 0
    assert rows["zh-typhoon"]["checklist"]["items"]["on_question"]  # its own title, not the grounding page's
    assert result["totals"]["pages"] == 3 and result["meta"]["backend"] == "openai"
    report = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert report.count('src="data:image/png;base64,') == 3 and 'href="pages/zh-typhoon.html"' in report
    assert "/static/" not in report.split("<body>")[1]  # nothing to fetch: it opens from file://
    assert (tmp_path / "pages" / "en-volcano-night.html").read_text().count("#05060f") == 1


def test_the_library_row_answers_each_question_with_its_routed_library_page(tmp_path):
    out = StringIO()
    call_command("pagebench", "--questions", str(QUESTIONS), "--library", "--limit", "2", stdout=out, stderr=StringIO())
    table = out.getvalue()
    assert "en-volcano           library done" in table and "zh-typhoon           library no_page" in table
    assert "1/2 pages" in table

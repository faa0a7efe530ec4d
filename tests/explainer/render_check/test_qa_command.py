"""`manage.py qa` prints the report as JSON and answers with an exit code scripts can rely on."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from explainer.models import Generation, PageVersion, Thread

from .pages import break_plain_page, kit_page

pytestmark = pytest.mark.browser


def run_qa(*args) -> tuple[int, str]:
    from io import StringIO

    out = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("qa", *args, stdout=out, stderr=StringIO())
    return exited.value.code, out.getvalue()


def test_a_passing_file_prints_a_json_report_and_exits_0(tmp_path):
    path = tmp_path / "page.html"
    path.write_text(kit_page(), encoding="utf-8")
    code, out = run_qa(str(path), "--json")
    report = json.loads(out)
    assert code == 0
    assert report["passed"] is True
    assert report["checks"]["canvas"]["passed"] is True


def test_a_failing_stored_page_exits_1_and_names_the_check(db):
    thread = Thread.objects.create()
    generation = Generation.objects.create(thread=thread, question="q")
    html = break_plain_page("</head>", '<script src="https://cdn.example.com/x.js"></script></head>')
    page = PageVersion.objects.create(thread=thread, generation=generation, version=1, html=html)
    code, out = run_qa(str(page.pk), "--json")
    assert code == 1
    assert "csp" in json.loads(out)["failed_checks"]


def test_several_files_are_checked_in_one_run_with_a_json_line_each_in_order(tmp_path):
    good, bad = tmp_path / "good.html", tmp_path / "bad.html"
    good.write_text(kit_page(), encoding="utf-8")
    bad.write_text("<!doctype html><html><body>no scene</body></html>", encoding="utf-8")
    code, out = run_qa(str(good), str(bad), "--json")
    reports = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [(r["target"], r["passed"]) for r in reports] == [(str(good), True), (str(bad), False)]


def test_one_missing_target_among_several_exits_2_before_checking_any(tmp_path):
    good = tmp_path / "good.html"
    good.write_text(kit_page(), encoding="utf-8")
    assert run_qa(str(good), str(tmp_path / "gone.html"), "--json") == (2, "")


@pytest.mark.parametrize("target", ["/no/such/page.html", "999999", "not-a-page"])
def test_a_missing_file_or_page_exits_2(db, target):
    code, out = run_qa(target, "--json")
    assert code == 2
    assert out == ""

"""What a render report tells a repair: the failed required checks first, then the page's own errors."""

from __future__ import annotations

from explainer.render_check.report import RenderReport


def test_a_repair_hears_the_failed_checks_then_the_page_and_console_errors_once_each():
    report = RenderReport(url="http://127.0.0.1/p", page_errors=["TypeError: x is undefined"],
                          console_errors=["boom", "boom"])
    report.add("ready", True, "ok")
    report.add("canvas", False, "blank")
    report.add("animates", False, "still", required=False)
    assert report.repair_errors() == ["canvas: blank", "page error: TypeError: x is undefined", "console error: boom"]
    assert report.as_dict()["repair_errors"] == report.repair_errors()


def test_a_failed_report_with_nothing_to_say_still_gives_the_model_a_reason():
    assert RenderReport(url="http://127.0.0.1/p").repair_errors() == ["the page failed the render check"]

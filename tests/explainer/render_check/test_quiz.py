"""The render check answers a kit page's quiz as a learner would and fails a quiz that gives no feedback."""

from __future__ import annotations

import pytest

from explainer.render_check import check_html

from .pages import kit_page

pytestmark = pytest.mark.browser

QUIZ = """
app.quiz([
  { q: "Why is it night?", options: ["Our side faces away from the Sun", "The Sun goes out"], answer: 0,
    feedback: ["Yes: Earth turns us away from it.", "No: the Sun shines all the time."] },
  { q: "How long is a day?", options: ["24 hours", "A year"], answer: 0, feedback: "One turn of Earth." },
  { q: "Which side is lit?", options: ["The side facing the Sun", "Both sides"], answer: 0, feedback: "Half is lit." },
]);
</script>"""


def with_quiz(extra: str = "") -> str:
    return kit_page().replace("</script>\n</body>", QUIZ + "\n</body>").replace("</head>", f"{extra}</head>")


def test_a_page_whose_quiz_answers_passes_the_quiz_check_with_the_feedback_it_showed():
    report = check_html(with_quiz())
    assert report.passed, report.summary()
    assert report.checks["quiz"].passed and report.checks["quiz"].required
    assert report.metrics["quiz"] == {"questions": 3, "question": "Why is it night?",
                                      "feedback": "Correct! Yes: Earth turns us away from it."}
    assert report.screenshots["quiz"].startswith(b"\x89PNG")


def test_a_quiz_whose_feedback_never_shows_fails_the_check_naming_the_quiz():
    report = check_html(with_quiz("<style>.kit-quiz-feedback { display: none !important; }</style>"))
    assert report.failed_checks == ["quiz"], report.summary()
    assert "could not answer the first question" in report.checks["quiz"].detail


def test_a_page_without_a_quiz_is_not_failed_for_it():
    report = check_html(kit_page())
    assert report.passed, report.summary()
    assert not report.checks["quiz"].required

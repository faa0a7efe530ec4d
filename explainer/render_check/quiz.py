"""The quiz judge: a page with a kit quiz must let a learner answer a question and see feedback.

Called by the check's orchestration after the interaction judge; see docs/render-check.md.
"""

from __future__ import annotations

from .report import RenderReport

QUIZ_STATE = """() => {
  const quiz = window.__kit && window.__kit.quiz;
  if (!quiz || typeof quiz.state !== "function") return null;
  return {count: quiz.count, ...quiz.state()};
}"""

# A part's info panel may cover the quiz button (both sit top right on a laptop): close it first.
CLOSE_PANEL = "() => { if (window.__kit && typeof window.__kit.close === 'function') window.__kit.close(); }"


async def judge_quiz(page, report: RenderReport, *, timeout_s: float = 5.0) -> None:
    """Open the quiz with a click, click the first option, and expect feedback text to show.

    A page without a quiz gets an informative (not required) entry.
    """
    before = await page.evaluate(QUIZ_STATE)
    if before is None:
        report.add("quiz", False, "the page has no kit quiz", required=False)
        return
    timeout_ms = timeout_s * 1000
    try:
        await page.evaluate(CLOSE_PANEL)
        await page.locator(".kit-quiz-open").first.click(timeout=timeout_ms)
        option = page.locator(".kit-quiz:not([hidden]) .kit-quiz-option:not([disabled])").first
        question = (await page.locator(".kit-quiz-question").first.inner_text(timeout=timeout_ms)).strip()
        await option.click(timeout=timeout_ms)
        feedback = page.locator(".kit-quiz-feedback").first
        await feedback.wait_for(state="visible", timeout=timeout_ms)
        shown = (await feedback.inner_text(timeout=timeout_ms)).strip()
        report.screenshots["quiz"] = await page.screenshot(animations="allow", caret="initial")
        await page.keyboard.press("Escape")
    except Exception as exc:  # noqa: BLE001 - any failure to answer is the verdict
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        report.add("quiz", False, f"could not answer the first question of the quiz: {message}")
        return
    after = await page.evaluate(QUIZ_STATE)
    report.metrics["quiz"] = {"questions": before["count"], "question": question, "feedback": shown}
    if not shown or after is None or after.get("answered") is None:
        report.add("quiz", False, f"answering {question!r} showed no feedback")
    else:
        report.add("quiz", True, f"{before['count']} questions; answering {question!r} showed {shown[:80]!r}")

"""One page through a backend, as an outcome: the entry the Celery task and `manage.py explain` share; and the
backend's second opinion on an unsure lesson, the web tier's one call to a model (`judge_lesson`).

No Celery, no Redis: the caller brings the backend and the sink, and handles what it raises (other than
a `BackendError`, which is the outcome it names).
"""

from __future__ import annotations

import logging

from model_worker.backends.base import BackendError, PageBackend, PageSink
from model_worker.backends.reply import page_problems
from model_worker.contract.pages import VERDICTS, LessonQuestion, PageOutcome, PageRequest

log = logging.getLogger(__name__)


def run_page(backend: PageBackend, request: PageRequest, sink: PageSink) -> PageOutcome:
    """Generate one page and describe how it ended. A page that is empty or no complete document (a
    lone `<!doctype html> </html>`) fails as `empty_page`: it is never stored as a version."""
    try:
        result = backend.generate_page(request, sink)
    except BackendError as exc:
        log.warning("backend %s: %s: %s", type(backend).__name__, exc.code, exc.message)
        return PageOutcome.failed(exc.code, exc.message, exc.stats)
    if result.stopped:
        return PageOutcome(status="cancelled", stats=result.stats)
    if not result.html.strip():
        return PageOutcome.failed("empty_page", "The model wrote an empty page.", result.stats)
    problems = page_problems(result.html, kit=False)
    if problems:
        return PageOutcome.failed("empty_page", f"The model wrote no complete page: {'; '.join(problems)}.",
                                  result.stats)
    return PageOutcome(status="done", html=result.html, stats=result.stats)


def judge_lesson(backend: PageBackend, ask: LessonQuestion, *, timeout_s: float) -> str:
    """The backend's second opinion on a lesson for a question ("yes", "no" or "unknown"): "unknown" from a
    backend that cannot give one, or whenever asking fails, so a question is never held up by it."""
    judge = getattr(backend, "judge", None)
    if judge is None:
        return "unknown"
    try:
        verdict = judge(ask, timeout_s=timeout_s)
    except Exception as exc:  # noqa: BLE001 - a second opinion never fails the learner's question
        log.warning("backend %s: no second opinion: %s", type(backend).__name__, exc)
        return "unknown"
    return verdict if verdict in VERDICTS else "unknown"


class NullSink:
    """A `PageSink` that shows nothing and never stops the page: for benchmarks and batch runs."""

    def on_draft(self, block: int, pieces: list[str | None]) -> None:
        pass

    def on_commit(self, block: int, text: str, tokens: int) -> None:
        pass

    def should_stop(self) -> bool:
        return False

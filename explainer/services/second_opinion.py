"""A second opinion on an unsure route: the configured model asked, in one short call, whether the lesson the
router is unsure of answers the new question; "no" writes the page for the question without that lesson."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

from django.conf import settings

from explainer import metrics
from explainer.library.router import AnswerPlan, second_opinion_lesson, without_lesson
from explainer.selectors.backend import backend_engine
from model_worker.config import EngineSettings, load_backend
from model_worker.contract.pages import BackendCapabilities, LessonQuestion
from model_worker.worker.run import judge_lesson

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SecondOpinion:
    verdict: str  # "yes" | "no" | "unknown" (model_worker.contract.pages.VERDICTS)
    lesson: str  # the slug of the lesson judged


def second_opinion_plan(*, plan: AnswerPlan, question: str,
                        features: BackendCapabilities) -> tuple[AnswerPlan, SecondOpinion | None]:
    """The plan of a new question after the model's second opinion on its unsure lesson, and that opinion; the plan
    as it was, and None, when no opinion is asked (a sure route, a backend that cannot give one, SECOND_OPINION
    off). The wait is bounded by SECOND_OPINION_TIMEOUT_S; "unknown" keeps the router's choice."""
    if not (settings.SECOND_OPINION and features.second_opinion):
        return plan, None
    lesson = second_opinion_lesson(plan)
    if lesson is None:
        return plan, None
    ask = LessonQuestion(question=question, lang=plan.route.lang, title=lesson.title, intro=lesson.intro)
    try:
        backend = _backend(backend_engine())
    except Exception:  # noqa: BLE001 - a bad model setting is the GPU worker's to report, on the page itself
        log.exception("the page backend could not be built for a second opinion")
        verdict = "unknown"
    else:
        verdict = judge_lesson(backend, ask, timeout_s=settings.SECOND_OPINION_TIMEOUT_S)
    metrics.second_opinion_given(verdict=verdict)
    return (without_lesson(plan) if verdict == "no" else plan), SecondOpinion(verdict=verdict, lesson=lesson.slug)


@functools.lru_cache(maxsize=4)
def _backend(engine: EngineSettings):
    """The backend, built once per settings: for a served model, an HTTP client (its connections kept)."""
    return load_backend(engine)

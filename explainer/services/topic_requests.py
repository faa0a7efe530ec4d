"""Record questions the library has no page for, as topics learners asked for."""

from __future__ import annotations

from explainer.library.text import question_key
from explainer.models import Classroom, Learner, TopicRequest


def topic_request_record(
    *, classroom: Classroom | None, learner: Learner | None, question: str, lang: str, nearest: list[str],
    score: float, session_key: str = "", unsure: bool = False,
) -> TopicRequest:
    """Keep a question the library could not answer, for the teachers' "Requested topics" (and, refused as
    `unsure`, for the learner's pick among the `nearest` to teach the router: `services.route_learning`)."""
    return TopicRequest.objects.create(
        classroom=classroom, learner=learner, session_key=session_key, question=question,
        normalised=question_key(question), lang=lang, nearest=nearest, score=score, unsure=unsure,
    )

"""Record questions the library has no page for, as topics learners asked for."""

from __future__ import annotations

from explainer.models import Classroom, Learner, TopicRequest


def question_key(question: str) -> str:
    """The form repeats of one question share: lower case, single spaces, no end punctuation."""
    return " ".join(question.lower().split()).rstrip("?？!！.。 ")[:500]


def topic_request_record(
    *, classroom: Classroom | None, learner: Learner | None, question: str, lang: str, nearest: list[str],
    score: float,
) -> TopicRequest:
    """Keep a question the library could not answer, for the teachers' "Requested topics"."""
    return TopicRequest.objects.create(
        classroom=classroom, learner=learner, question=question, normalised=question_key(question), lang=lang,
        nearest=nearest, score=score,
    )

"""Requested topics: what learners asked that the library had no page for, counted per question, and
whether a page answers it now."""

from __future__ import annotations

from django.db.models import Count, Max, Q

from explainer.models import Classroom, TopicRequest


def requested_topics(*, user, classroom: Classroom | None = None, limit: int = 200) -> list[dict]:
    """Questions without a library page, most asked first: per class the user teaches (and, for a
    superuser, those asked outside any class), each with its count, last time, nearest pages and
    `answered_by`: what would answer it if it were asked now (None while nothing would)."""
    qs = TopicRequest.objects.all()
    if classroom is not None:
        qs = qs.filter(classroom=classroom)
    elif not user.is_superuser:
        qs = qs.filter(classroom__teacher=user)
    rows = (
        qs.values("classroom_id", "classroom__name", "normalised")
        .annotate(count=Count("pk"), last_asked=Max("created_at"), learners=Count("learner", distinct=True),
                  zh=Count("pk", filter=Q(lang="zh")))
        .order_by("-count", "-last_asked")[:limit]
    )
    classes = Classroom.objects.in_bulk({r["classroom_id"] for r in rows if r["classroom_id"]})
    out = []
    for row in rows:
        latest = qs.filter(classroom_id=row["classroom_id"], normalised=row["normalised"]).order_by("-created_at")
        example = latest.values("question", "nearest", "lang").first()
        answered_by = request_answered_by(classroom=classes.get(row["classroom_id"]), question=example["question"],
                                          lang=example["lang"])
        out.append({**row, "question": example["question"], "nearest": example["nearest"], "lang": example["lang"],
                    "answered_by": answered_by})
    return out


def request_answered_by(*, classroom: Classroom | None, question: str, lang: str) -> dict | None:
    """What answers the question now, as a new question is answered: a featured page of the class, the
    exemplar pinned to its topic, or a library page the router reaches (one a teacher added since, say).
    A dict with `kind` ("featured", "exemplar", "library"), `title` and `slug`, or None."""
    from explainer.selectors.library import question_route
    from explainer.selectors.review import featured_page_for

    featured = featured_page_for(classroom=classroom, question=question)
    if featured is not None:
        return {"kind": "featured", "title": featured.generation.question, "slug": "", "page_id": featured.pk}
    exemplar = _pinned_exemplar(classroom=classroom, question=question)
    if exemplar is not None:
        return {"kind": "exemplar", "title": exemplar.title, "slug": exemplar.slug}
    route = question_route(question=question, lang=lang, classroom=classroom)
    if route is not None and route.inside:
        return {"kind": "library", "title": route.page.title, "slug": route.page.slug}
    return None


def _pinned_exemplar(*, classroom: Classroom | None, question: str):
    from explainer.selectors.exemplars import exemplar_page
    from explainer.selectors.topic_space import class_topic_for

    if classroom is None or not classroom.topics.exclude(exemplar="").exists():
        return None  # no topic pins a page: no need to match the question
    topic = class_topic_for(classroom=classroom, question=question)
    return exemplar_page(topic.exemplar) if topic is not None and topic.exemplar else None

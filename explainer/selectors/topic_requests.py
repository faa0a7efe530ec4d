"""Requested topics: what learners asked that the library has no page for, counted per question."""

from __future__ import annotations

from django.db.models import Count, Max, Q

from explainer.models import Classroom, TopicRequest


def requested_topics(*, user, classroom: Classroom | None = None, limit: int = 200) -> list[dict]:
    """Questions without a library page, most asked first: per class the user teaches (and, for a
    superuser, those asked outside any class), each with its count, last time and nearest pages."""
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
    out = []
    for row in rows:
        latest = qs.filter(classroom_id=row["classroom_id"], normalised=row["normalised"]).order_by("-created_at")
        example = latest.values("question", "nearest").first()
        out.append({**row, "question": example["question"], "nearest": example["nearest"]})
    return out

"""Questions, follow-ups, pages and render-check failures per learner and per class, day by day."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from explainer.models import Classroom, Generation, PageVersion, RenderCheck

METRICS = ("questions", "follow_ups", "pages", "check_failures")


@dataclass
class UsageRow:
    day: date
    learner_id: int | None
    learner: str
    counts: dict = field(default_factory=lambda: dict.fromkeys(METRICS, 0))


def _counted(qs, learner_path: str, name_path: str):
    return (
        qs.annotate(day=TruncDate("created_at"))
        .values("day", learner_path, name_path)
        .annotate(n=Count("pk"))
    )


def usage_rows(*, classroom: Classroom, days: int = 30) -> list[UsageRow]:
    """One row per (day, learner) with any activity in the last `days` days, oldest first."""
    since = timezone.now() - timedelta(days=days)
    gens = Generation.objects.filter(classroom=classroom, created_at__gte=since)
    sources = [
        ("questions", gens.filter(kind=Generation.Kind.ASK), "learner_id", "learner__display_name"),
        ("follow_ups", gens.filter(kind=Generation.Kind.FOLLOW_UP), "learner_id", "learner__display_name"),
        (
            "pages",
            PageVersion.objects.filter(thread__classroom=classroom, created_at__gte=since),
            "generation__learner_id",
            "generation__learner__display_name",
        ),
        (
            "check_failures",
            RenderCheck.objects.filter(
                page__thread__classroom=classroom,
                created_at__gte=since,
                status__in=[RenderCheck.Status.FAILED, RenderCheck.Status.ERROR],
            ),
            "page__generation__learner_id",
            "page__generation__learner__display_name",
        ),
    ]
    rows: dict = {}
    for metric, qs, learner_path, name_path in sources:
        for rec in _counted(qs, learner_path, name_path):
            key = (rec["day"], rec[learner_path])
            if key not in rows:
                rows[key] = UsageRow(rec["day"], rec[learner_path], rec[name_path] or "(no learner)")
            rows[key].counts[metric] += rec["n"]
    return sorted(rows.values(), key=lambda r: (r.day, r.learner.lower()))


def usage_totals(rows: list[UsageRow]) -> dict:
    """Per learner and per day totals of the rows, plus the class total."""
    by_learner: dict = defaultdict(lambda: dict.fromkeys(METRICS, 0))
    by_day: dict = defaultdict(lambda: dict.fromkeys(METRICS, 0))
    total = dict.fromkeys(METRICS, 0)
    for row in rows:
        for metric, n in row.counts.items():
            by_learner[row.learner][metric] += n
            by_day[row.day][metric] += n
            total[metric] += n
    busiest = max((c["questions"] + c["follow_ups"] for c in by_day.values()), default=0)
    return {
        "by_learner": dict(sorted(by_learner.items())),
        "by_day": dict(sorted(by_day.items())),
        "total": total,
        "busiest_day": busiest,  # questions + follow-ups on the busiest day, to scale the chart
    }

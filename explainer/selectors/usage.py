"""Questions, follow-ups, pages and render-check failures per learner and per class, day by day."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from explainer.models import Classroom, Generation, PageVersion, RenderCheck
from explainer.models.classroom import learner_label

METRICS = ("questions", "follow_ups", "pages", "check_failures")


@dataclass
class UsageRow:
    day: date
    learner_id: int | None
    learner: str
    counts: dict = field(default_factory=lambda: dict.fromkeys(METRICS, 0))


def _counted(qs, learner: str):
    """Counts per day and learner; `learner` is the path to the learner from the counted rows."""
    return (
        qs.annotate(day=TruncDate("created_at"))
        .values("day", learner, f"{learner}__display_name", f"{learner}__removed_at")
        .annotate(n=Count("pk"))
    )


def _learner_label(name: str | None, removed_at) -> str:
    return "(no learner)" if name is None else learner_label(name, removed_at)


def usage_rows(*, classroom: Classroom, days: int = 30) -> list[UsageRow]:
    """One row per (day, learner) with any activity in the last `days` days, oldest first."""
    since = timezone.now() - timedelta(days=days)
    gens = Generation.objects.filter(classroom=classroom, created_at__gte=since)
    sources = [
        ("questions", gens.filter(kind=Generation.Kind.ASK), "learner"),
        ("follow_ups", gens.filter(kind=Generation.Kind.FOLLOW_UP), "learner"),
        ("pages", PageVersion.objects.filter(thread__classroom=classroom, created_at__gte=since), "generation__learner"),
        (
            "check_failures",
            RenderCheck.objects.filter(
                page__thread__classroom=classroom,
                created_at__gte=since,
                status__in=[RenderCheck.Status.FAILED, RenderCheck.Status.ERROR],
            ),
            "page__generation__learner",
        ),
    ]
    rows: dict = {}
    for metric, qs, learner in sources:
        for rec in _counted(qs, learner):
            key = (rec["day"], rec[learner])
            if key not in rows:
                label = _learner_label(rec[f"{learner}__display_name"], rec[f"{learner}__removed_at"])
                rows[key] = UsageRow(rec["day"], rec[learner], label)
            rows[key].counts[metric] += rec["n"]
    return sorted(rows.values(), key=lambda r: (r.day, r.learner.lower()))


def usage_totals(rows: list[UsageRow]) -> dict:
    """Per learner ((name, counts) pairs, in name order) and per day totals of the rows, plus the class total."""
    names = {row.learner_id: row.learner for row in rows}
    # By id, not name: a removed learner's name may be in use again.
    by_learner: dict = defaultdict(lambda: dict.fromkeys(METRICS, 0))
    by_day: dict = defaultdict(lambda: dict.fromkeys(METRICS, 0))
    total = dict.fromkeys(METRICS, 0)
    for row in rows:
        for metric, n in row.counts.items():
            by_learner[row.learner_id][metric] += n
            by_day[row.day][metric] += n
            total[metric] += n
    busiest = max((c["questions"] + c["follow_ups"] for c in by_day.values()), default=0)
    return {
        "by_learner": sorted(((names[i], counts) for i, counts in by_learner.items()), key=lambda r: r[0].lower()),
        "by_day": dict(sorted(by_day.items())),
        "total": total,
        "busiest_day": busiest,  # questions + follow-ups on the busiest day, to scale the chart
    }

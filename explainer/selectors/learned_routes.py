"""What the router has learned for a learner's library: the variants and wrong pages that hold for their class
(or the anonymous library), and those that hold for everyone."""

from __future__ import annotations

from collections import defaultdict

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from explainer.library.learned import NOTHING, Learned
from explainer.models import Classroom, LearnedRoute


def counting_routes() -> QuerySet[LearnedRoute]:
    """Every learned route that counts now: not withdrawn, and a pick only once its learner stayed on the page."""
    return LearnedRoute.objects.filter(withdrawn_at__isnull=True, counts_from__lte=timezone.now())


def _scope(classroom: Classroom | None) -> Q:
    own = Q(classroom=classroom) if classroom is not None else Q(classroom__isnull=True)
    return own | Q(everyone=True)


def learned_routes(*, classroom: Classroom | None = None) -> Learned:
    """The variants and wrong pages of the learner's library: their class's (or the anonymous library's), those
    for everyone, and the picks that enough distinct learners anywhere agree on (`ROUTE_LEARN_AGREE`). A wrong
    page holds over any variant of the same question to it."""
    counting = counting_routes()
    rows = list(counting.filter(_scope(classroom)).values_list("kind", "slug", "normalised", "question"))
    rows += [(LearnedRoute.Kind.VARIANT, *agreed) for agreed in _agreed(counting)]
    if not rows:
        return NOTHING
    wrong = {(slug, key): question for kind, slug, key, question in rows if kind == LearnedRoute.Kind.WRONG}
    variants = {(slug, key): question for kind, slug, key, question in rows
                if kind == LearnedRoute.Kind.VARIANT and (slug, key) not in wrong}
    # Sorted, so that the same rows make the same index (`selectors.library.index_for` is cached by them).
    return Learned(variants=tuple(sorted((slug, q) for (slug, _), q in variants.items())),
                   wrong=tuple(sorted((slug, q) for (slug, _), q in wrong.items())))


def _agreed(counting: QuerySet[LearnedRoute]) -> list[tuple[str, str, str]]:
    """(slug, normalised, question) of the picks that `ROUTE_LEARN_AGREE` distinct learners made, in any class."""
    pickers: dict[tuple[str, str], set[str]] = defaultdict(set)
    example: dict[tuple[str, str], str] = {}
    picks = counting.filter(kind=LearnedRoute.Kind.VARIANT, source=LearnedRoute.Source.PICK, everyone=False)
    for slug, key, question, learner_id, session_key in picks.values_list(
            "slug", "normalised", "question", "learner_id", "session_key"):
        pickers[slug, key].add(f"learner:{learner_id}" if learner_id else f"session:{session_key}")
        example.setdefault((slug, key), question)
    return [(slug, key, example[slug, key]) for (slug, key), who in pickers.items()
            if len(who) >= settings.ROUTE_LEARN_AGREE]


def learned_for_review(*, user, classroom: Classroom | None = None, limit: int = 200) -> QuerySet[LearnedRoute]:
    """What the router learned that a teacher may see and undo: their class's (all their classes' without
    `classroom`), and for a library editor (a superuser) also what was learned outside classes; newest first."""
    qs = LearnedRoute.objects.select_related("classroom", "learner", "decided_by")
    if classroom is not None:
        qs = qs.filter(classroom=classroom)
    elif not user.is_superuser:
        qs = qs.filter(classroom__teacher=user)
    return qs[:limit]


def learned_route_for(*, user, route_id: int) -> LearnedRoute | None:
    """A learned route the user may undo: one of their classes', or any for a library editor."""
    qs = LearnedRoute.objects.filter(pk=route_id)
    if not user.is_superuser:
        qs = qs.filter(classroom__teacher=user)
    return qs.first()

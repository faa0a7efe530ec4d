"""The class's pages as the teacher reviews them, and featured pages that answer from the library."""

from __future__ import annotations

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery

from explainer.library.text import comparable
from explainer.models import Classroom, Generation, Learner, PageVersion, RenderCheck
from explainer.selectors.library import library_index

CHECK_FILTERS = ("passed", "failed", "error", "pending", "none")


def review_pages(
    *, classroom: Classroom, topic_id=None, learner_id=None, check: str | None = None
) -> QuerySet[PageVersion]:
    """Every version of every page in the class, newest first, with its latest render-check status."""
    latest = RenderCheck.objects.filter(page=OuterRef("pk")).order_by("-created_at", "-pk")
    qs = (
        PageVersion.objects.filter(thread__classroom=classroom)
        .select_related("thread", "thread__topic", "generation", "generation__learner")
        .annotate(check_status=Subquery(latest.values("status")[:1]), check_id=Subquery(latest.values("pk")[:1]),
                  thumbnail_check=Subquery(latest.exclude(thumbnail=None).values("pk")[:1]))
        .order_by("-created_at", "-pk")
    )
    if topic_id:
        qs = qs.filter(thread__topic_id=topic_id)
    if learner_id:
        qs = qs.filter(generation__learner_id=learner_id)
    if check == "none":
        qs = qs.filter(check_status__isnull=True)
    elif check in CHECK_FILTERS:
        qs = qs.filter(check_status=check)
    return qs


def review_learners(*, classroom: Classroom) -> QuerySet[Learner]:
    """The learners the gallery filters by: the roster, then removed learners who left pages in the class."""
    left_pages = PageVersion.objects.filter(thread__classroom=classroom, generation__learner=OuterRef("pk"))
    return (
        classroom.learners.filter(Q(removed_at__isnull=True) | Exists(left_pages))
        .order_by(F("removed_at").asc(nulls_first=True), "display_name", "pk")
    )


def page_versions(*, page: PageVersion) -> QuerySet[PageVersion]:
    return PageVersion.objects.filter(thread_id=page.thread_id).select_related("generation").order_by("version")


def page_second_opinion(*, page: PageVersion) -> dict | None:
    """The model's second opinion on the lesson the router was unsure of for the thread's question: `verdict`
    ("yes", "no", "unknown") and the lesson's `slug` and `title`; None when none was asked."""
    asked = (Generation.objects.filter(thread_id=page.thread_id, kind=Generation.Kind.ASK)
             .exclude(second_opinion="").order_by("created_at").values("second_opinion", "second_opinion_lesson")
             .first())
    if asked is None:
        return None
    slug = asked["second_opinion_lesson"]
    lesson = library_index(classroom=page.thread.classroom).by_slug.get(slug)
    return {"verdict": asked["second_opinion"], "slug": slug, "title": lesson.title if lesson else slug}


def page_latest_check_status(*, page: PageVersion) -> str | None:
    """The status of the page's latest render check, None when it was never checked."""
    return page.checks.order_by("-created_at", "-pk").values_list("status", flat=True).first()


def latest_thumbnail(*, page: PageVersion) -> bytes | None:
    check = page.checks.exclude(thumbnail=None).order_by("-created_at", "-pk").first()
    return bytes(check.thumbnail) if check is not None else None


def featured_page_for(*, classroom: Classroom | None, question: str) -> PageVersion | None:
    """A visible featured page of the class whose question matches this one once normalised; never one
    whose latest render check failed (a re-run after it was featured can fail it)."""
    if classroom is None:
        return None
    wanted = comparable(question).rstrip("?？!！.。 ")
    latest = RenderCheck.objects.filter(page=OuterRef("pk")).order_by("-created_at", "-pk")
    featured = (
        PageVersion.objects.filter(thread__classroom=classroom, featured=True, hidden=False)
        .annotate(check_status=Subquery(latest.values("status")[:1]))
        .filter(Q(check_status__isnull=True) | ~Q(check_status=RenderCheck.Status.FAILED))
        .select_related("generation")
        .order_by("-created_at")
    )
    for page in featured:
        if comparable(page.generation.question).rstrip("?？!！.。 ") == wanted:
            return page
    return None


def routed_outside_classes(*, limit: int = 100) -> list[PageVersion]:
    """For the library's editors: the first pages of threads asked outside classes that the router answered with a
    library page, newest first, each with `routed` (that page's record) and `routed_question`."""
    pages = list(PageVersion.objects.filter(thread__classroom__isnull=True, version=1).exclude(thread__topic_slug="")
                 .select_related("thread", "generation").order_by("-created_at", "-pk")[:limit])
    library = library_index().by_slug
    for page in pages:
        page.routed = library.get(page.thread.topic_slug)
    return [p for p in pages if p.routed is not None]

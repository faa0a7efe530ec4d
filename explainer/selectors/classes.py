"""Who may see which class, learner and page."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from explainer.models import Classroom, Learner, ModerationItem, PageVersion, RenderCheck, Topic


def classrooms_for(*, user) -> QuerySet[Classroom]:
    """The classes a signed-in user may manage: their own, or all for a superuser."""
    qs = Classroom.objects.all()
    if not user.is_superuser:
        qs = qs.filter(teacher=user)
    return qs.annotate(
        learner_count=Count("learners", filter=Q(learners__removed_at__isnull=True), distinct=True),
        pending_count=Count(
            "moderation_items", filter=Q(moderation_items__status=ModerationItem.Status.PENDING), distinct=True
        ),
    )


def classroom_for(*, user, classroom_id) -> Classroom | None:
    return classrooms_for(user=user).filter(pk=classroom_id).first()


def page_for_teacher(*, user, page_id) -> PageVersion | None:
    """A page of one of the user's classes (the thread's class), or None."""
    qs = PageVersion.objects.select_related("thread", "generation", "thread__classroom", "generation__learner")
    if not user.is_superuser:
        qs = qs.filter(thread__classroom__teacher=user)
    return qs.filter(pk=page_id).first()


def moderation_item_for_teacher(*, user, item_id) -> ModerationItem | None:
    qs = ModerationItem.objects.select_related("page", "classroom")
    if not user.is_superuser:
        qs = qs.filter(classroom__teacher=user)
    return qs.filter(pk=item_id).first()


def learner_from_session(session) -> Learner | None:
    """The learner this browser joined as (session key `learner_id`), if they are still on the roster."""
    learner_id = session.get("learner_id")
    if not learner_id:
        return None
    return Learner.objects.on_roster().select_related("classroom").filter(pk=learner_id).first()


def learner_can_view_page(*, learner: Learner | None, page: PageVersion) -> bool:
    """Learners see visible pages of their own class; pages made outside any class stay with their thread."""
    if page.hidden:
        return False
    classroom_id = page.thread.classroom_id
    if classroom_id is None:
        return True
    return learner is not None and learner.classroom_id == classroom_id


def topic_suggestions_for(*, learner: Learner | None) -> list[dict]:
    """Topics of the learner's class with their seed questions, for the learner UI's suggestions."""
    if learner is None:
        return []
    return [
        {"id": t.id, "title": t.title, "questions": list(t.seed_questions)}
        for t in Topic.objects.filter(classroom_id=learner.classroom_id)
    ]


def panel_summary(*, user) -> list[dict]:
    """Per class the user manages: learners, pages today, items waiting for review, failed checks today."""
    since = timezone.now() - timedelta(days=1)
    return [
        {
            "classroom": c,
            "learners": c.learner_count,
            "pending": c.pending_count,
            "pages_today": PageVersion.objects.filter(thread__classroom=c, created_at__gte=since).count(),
            "failed_checks_today": RenderCheck.objects.filter(
                page__thread__classroom=c, created_at__gte=since,
                status__in=[RenderCheck.Status.FAILED, RenderCheck.Status.ERROR],
            ).count(),
        }
        for c in classrooms_for(user=user).order_by("name")
    ]

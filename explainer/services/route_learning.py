"""The router learns from learners and teachers (docs/teacher.md, "Routing that learns").

A learner's pick: a learner whose question was refused as unsure picks one of the topics offered. The refused
question becomes a learned variant of that page for their class (or the anonymous library) once they stay on the
page (`ROUTE_LEARN_STAY_S`; a follow-up there counts at once, a new question before then withdraws it). At most
`ROUTE_LEARN_PER_DAY` picks a learner a day count; a question with a moderation term never does.

A teacher's word, on a routed question in the review gallery or a requested topic: "wrong page" (the question and
its near paraphrases stop routing to that page, and it becomes a requested topic), "right page" (a variant at
once, for everyone), or a requested topic pointed at a page. Anything learned can be undone.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from explainer.library.text import question_key
from explainer.models import Classroom, Generation, LearnedRoute, Learner, Thread, TopicRequest
from explainer.selectors.generation import thread_first_generation
from explainer.services.moderation import find_terms


def pick_learn(*, generation: Generation, picked: str, session_key: str, learner: Learner | None) -> LearnedRoute | None:
    """Learn from a learner's pick (`picked`: the page slug they clicked), when it answers this browser's last
    unsure refusal, offered there, within `ROUTE_LEARN_PICK_WINDOW_S`; None when nothing is learned."""
    now = timezone.now()
    classroom = generation.classroom
    asked = Q(learner=learner) if learner is not None else Q(session_key=session_key, learner__isnull=True)
    refusal = (TopicRequest.objects.filter(asked, classroom=classroom,
                                           created_at__gte=now - timedelta(seconds=settings.ROUTE_LEARN_PICK_WINDOW_S))
               .order_by("-created_at").first())
    if refusal is None or not refusal.unsure or picked not in refusal.nearest:
        return None
    if find_terms(refusal.question, classroom=classroom):
        return None  # a flagged or blocked question is never learned
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    picks_today = LearnedRoute.objects.filter(asked, source=LearnedRoute.Source.PICK, created_at__gte=today)
    if picks_today.count() >= settings.ROUTE_LEARN_PER_DAY:
        return None
    return LearnedRoute.objects.create(
        kind=LearnedRoute.Kind.VARIANT, source=LearnedRoute.Source.PICK, classroom=classroom,
        question=refusal.question, normalised=refusal.normalised, lang=refusal.lang, slug=picked, learner=learner,
        session_key=session_key if learner is None else "", generation=generation,
        counts_from=now + timedelta(seconds=settings.ROUTE_LEARN_STAY_S),
    )


def pick_followed(*, session_key: str, learner: Learner | None, thread: Thread | None) -> None:
    """A learner asks again while a pick of theirs waits to count: a follow-up on the picked page counts it at
    once (they stayed); a new question withdraws it (they went on to another topic straight away)."""
    now = timezone.now()
    asked = Q(learner=learner) if learner is not None else Q(session_key=session_key, learner__isnull=True)
    waiting = LearnedRoute.objects.filter(asked, source=LearnedRoute.Source.PICK, withdrawn_at__isnull=True,
                                          counts_from__gt=now)
    if thread is None:
        waiting.update(withdrawn_at=now)
    else:
        waiting.filter(generation__thread=thread).update(counts_from=now)


def _routed(generation: Generation) -> tuple[Generation, str]:
    """The generation a thread was routed by (its first) and the library page it was answered with."""
    thread = generation.thread
    first = thread_first_generation(thread=thread)
    if not thread.topic_slug or first is None:
        raise ValidationError("This page was not answered with a library page.")
    return first, thread.topic_slug


def _teacher_scope(user, classroom: Classroom | None) -> bool:
    """Whether a correction holds for everyone: a library editor's (a superuser's) on a question asked outside
    classes does."""
    return classroom is None and user.is_superuser


@transaction.atomic
def route_mark_wrong(*, user, generation: Generation) -> LearnedRoute:
    """A teacher says the page this question was answered with is the wrong one: the question, and its near
    paraphrases, stop routing there for their class (for everyone, said by a library editor outside classes); any
    variant of it to that page there is withdrawn; the question becomes a requested topic."""
    first, slug = _routed(generation)
    question, classroom = first.question, generation.classroom
    everyone = _teacher_scope(user, classroom)
    key = question_key(question)
    now = timezone.now()
    variants = LearnedRoute.objects.filter(kind=LearnedRoute.Kind.VARIANT, slug=slug, normalised=key,
                                           withdrawn_at__isnull=True)
    variants.filter(Q() if everyone else Q(classroom=classroom)).update(withdrawn_at=now)
    TopicRequest.objects.create(classroom=classroom, learner=generation.learner, question=question, normalised=key,
                                lang=first.lang, nearest=[], wrong_page=slug)
    return LearnedRoute.objects.create(
        kind=LearnedRoute.Kind.WRONG, source=LearnedRoute.Source.TEACHER, classroom=classroom, everyone=everyone,
        question=question, normalised=key, lang=first.lang, slug=slug, decided_by=user, counts_from=now,
    )


def route_mark_right(*, user, generation: Generation) -> LearnedRoute:
    """A teacher says the page this question was answered with is the right one: a variant at once, for every
    learner (a teacher's approval is what a pick waits for)."""
    first, slug = _routed(generation)
    return route_point(user=user, classroom=generation.classroom, question=first.question, lang=first.lang, slug=slug)


@transaction.atomic
def route_point(*, user, classroom: Classroom | None, question: str, lang: str, slug: str) -> LearnedRoute:
    """A teacher answers a question with a library page (a requested topic pointed at a page, or "right page"):
    a learned variant for everyone at once; a wrong page said of the same question and page is withdrawn."""
    from explainer.selectors.library import library_pages

    if slug not in {p.slug for p in library_pages(classroom=classroom)}:
        raise ValidationError(f"The library has no page {slug!r}.")
    key = question_key(question)
    now = timezone.now()
    LearnedRoute.objects.filter(kind=LearnedRoute.Kind.WRONG, slug=slug, normalised=key,
                                withdrawn_at__isnull=True).update(withdrawn_at=now)
    return LearnedRoute.objects.create(
        kind=LearnedRoute.Kind.VARIANT, source=LearnedRoute.Source.TEACHER, classroom=classroom, everyone=True,
        question=question, normalised=key, lang=lang, slug=slug, decided_by=user, counts_from=now,
    )


def route_undo(*, route: LearnedRoute) -> None:
    """Undo what the router learned: the route no longer counts (it stays listed, marked withdrawn)."""
    if route.withdrawn_at is None:
        route.withdrawn_at = timezone.now()
        route.save(update_fields=["withdrawn_at"])

"""Reads about threads, generations and their pages for the learner side."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet, Subquery

from explainer.models import Generation, PageVersion, RenderCheck, Thread
from explainer.pages.links import page_link

ACTIVE = (Generation.Status.QUEUED, Generation.Status.RUNNING)


def generation_queue_position(*, generation: Generation) -> int:
    """How many generations are queued or running ahead of this one."""
    return Generation.objects.filter(status__in=ACTIVE, created_at__lt=generation.created_at).count()


def generations_waiting_after(*, generation: Generation, limit: int = 500) -> list[tuple[Generation, int]]:
    """The active generations created after `generation`, each with its queue position."""
    active = list(Generation.objects.filter(status__in=ACTIVE).order_by("created_at", "pk")
                  .only("pk", "thread_id", "created_at")[:limit])
    return [(g, position) for position, g in enumerate(active) if g.created_at > generation.created_at]


def thread_for_session(*, thread_id, session_key: str) -> Thread | None:
    """The thread if this browser session owns it."""
    return Thread.objects.filter(pk=thread_id, session_key=session_key).select_related("topic").first()


def page_for_session(*, page_id: int, session_key: str) -> PageVersion | None:
    """A visible page of a thread this browser session owns."""
    return PageVersion.objects.filter(pk=page_id, thread__session_key=session_key, hidden=False).first()


def generation_for_session(*, generation_id, session_key: str) -> Generation | None:
    """The generation if this browser session owns its thread."""
    return Generation.objects.filter(pk=generation_id, thread__session_key=session_key).first()


def thread_latest_page(*, thread: Thread) -> PageVersion | None:
    return thread.pages.order_by("-version").first()


def thread_current_page(*, thread: Thread, before_version: int | None = None) -> PageVersion | None:
    """The version a follow-up revises: the newest visible one whose latest render check did not fail (a
    failing revision never becomes current), or the newest visible one when every one failed.
    `before_version`: only versions older than that one."""
    pages = thread.pages.filter(hidden=False).order_by("-version")  # a hidden page is never revised
    if before_version is not None:
        pages = pages.filter(version__lt=before_version)
    latest_check = RenderCheck.objects.filter(page=OuterRef("pk")).order_by("-created_at").values("status")[:1]
    working = pages.annotate(check_status=Subquery(latest_check)).exclude(check_status=RenderCheck.Status.FAILED)
    return working.first() or pages.first()


def repair_attempts_before(*, generation: Generation) -> tuple[int, Generation]:
    """How many repairs in a row led up to `generation` (0 for a question's own page), and the
    generation that asked the question they repair."""
    earlier = list(generation.thread.generations.filter(created_at__lte=generation.created_at)
                   .order_by("-created_at").only("kind", "question", "lang", "created_at"))
    repairs = 0
    for row in earlier:
        if row.kind != Generation.Kind.REPAIR:
            return repairs, row
        repairs += 1
    return repairs, generation


def thread_pages(*, thread: Thread) -> QuerySet[PageVersion]:
    """Visible versions of a thread, oldest first, with the question that produced each and the status
    of its latest render check (`check_status`, None while unchecked)."""
    latest = RenderCheck.objects.filter(page=OuterRef("pk")).order_by("-created_at").values("status")[:1]
    return (
        thread.pages.filter(hidden=False).select_related("generation")
        .annotate(check_status=Subquery(latest)).order_by("version")
    )


def page_awaiting_check(*, pages: list[PageVersion]) -> PageVersion | None:
    """The newest of a thread's visible versions (`thread_pages`) while its render check has not answered: a
    page reloaded between `done` and `qa` listens for the verdict."""
    newest = pages[-1] if pages else None
    pending = (None, RenderCheck.Status.PENDING)
    return newest if newest is not None and newest.check_status in pending else None


def thread_unfinished_generation(*, thread: Thread) -> Generation | None:
    """The thread's latest generation while it is still queued or being written (a reloaded page resumes it)."""
    latest = thread.generations.order_by("-created_at").first()
    unfinished = (Generation.Status.QUEUED, Generation.Status.RUNNING)
    return latest if latest is not None and latest.status in unfinished else None


def threads_for_session(*, session_key: str, limit: int = 20) -> QuerySet[Thread]:
    """This browser's latest threads that have something to open (a visible page, or one being written),
    each annotated with the `question` that opened it. A question stopped or failed before its first page
    left nothing to reopen."""
    first = Generation.objects.filter(thread=OuterRef("pk")).order_by("created_at").values("question")[:1]
    shown = PageVersion.objects.filter(thread=OuterRef("pk"), hidden=False)
    live = Generation.objects.filter(thread=OuterRef("pk"), status__in=ACTIVE)
    return (
        Thread.objects.filter(session_key=session_key)
        .annotate(question=Subquery(first))
        .exclude(question=None)
        .filter(Exists(shown) | Exists(live))
        .order_by("-created_at")[:limit]
    )


def thread_first_generation(*, thread: Thread) -> Generation | None:
    """The generation that opened the thread: its question and language."""
    return thread.generations.order_by("created_at").only("question", "lang").first()


def page_url(page: PageVersion) -> str:
    """The signed link to the sandboxed page: on `PAGE_ORIGIN` when set, else on this server; with the state
    the page opens in as its fragment (the kit applies it)."""
    return page_link(page.pk) + (f"#{page.state}" if page.state else "")

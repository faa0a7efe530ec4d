"""A thread's next page version, and the render check every stored page goes through."""

from __future__ import annotations

from django.db.models import Max

from explainer.models import Generation, PageVersion
from explainer.services import moderation
from model_worker.contract.queues import QA_QUEUE


def page_version_add(*, generation: Generation, html: str) -> PageVersion:
    """Store `html` as the next version of the generation's thread, screened by moderation: a page with a
    blocked term is hidden at once, a flagged one waits in the teacher's queue (where hiding it works)."""
    latest = generation.thread.pages.aggregate(n=Max("version"))["n"] or 0
    page = PageVersion.objects.create(thread=generation.thread, generation=generation, version=latest + 1, html=html)
    moderation.page_screen(page=page)
    return page


def render_check_queue(*, page_id: int) -> None:
    """Send a stored page to the render check (once the page is committed)."""
    from explainer.celery import app

    app.send_task("explainer.render_check", args=[page_id], queue=QA_QUEUE)

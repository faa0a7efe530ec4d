"""A thread's next page version."""

from __future__ import annotations

from django.db.models import Max

from explainer.models import Generation, PageVersion
from explainer.services import moderation


def page_version_add(*, generation: Generation, html: str, state: str = "") -> PageVersion:
    """Store `html` as the next version of the generation's thread, screened by moderation: a page with a
    blocked term is hidden at once, a flagged one waits in the teacher's queue (where hiding it works).
    `state`: the URL fragment the page opens in, when the version is a page shown another way."""
    latest = generation.thread.pages.aggregate(n=Max("version"))["n"] or 0
    page = PageVersion.objects.create(thread=generation.thread, generation=generation, version=latest + 1, html=html,
                                      state=state)
    moderation.page_screen(page=page)
    return page

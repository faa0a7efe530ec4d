"""Which stored page a request may see."""

from __future__ import annotations

from explainer.models import PageVersion
from explainer.pages.links import token_grants
from explainer.selectors.classes import page_for_teacher


def page_for_viewer(*, page_id: int, user, token: str | None) -> PageVersion | None:
    """The page for a teacher of its class, or for anyone holding its signed link unless it is hidden."""
    if user is not None and user.is_authenticated:
        page = page_for_teacher(user=user, page_id=page_id)
        if page is not None:
            return page
    if not token_grants(token, page_id):
        return None
    return PageVersion.objects.filter(pk=page_id, hidden=False).first()


def latest_thumbnail(*, page: PageVersion) -> bytes | None:
    check = page.checks.exclude(thumbnail=None).order_by("-created_at", "-pk").first()
    return bytes(check.thumbnail) if check is not None else None

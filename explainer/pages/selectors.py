"""Which stored page a request may see."""

from __future__ import annotations

from explainer.models import PageVersion
from explainer.selectors.classes import page_for_teacher


def page_for_viewer(*, page_id: int, user) -> PageVersion | None:
    """The page, unless it is hidden and the viewer is not a teacher of its class."""
    page = PageVersion.objects.filter(pk=page_id).first()
    if page is None or not page.hidden:
        return page
    if user is not None and user.is_authenticated and page_for_teacher(user=user, page_id=page_id):
        return page
    return None


def latest_thumbnail(*, page: PageVersion) -> bytes | None:
    check = page.checks.exclude(thumbnail=None).order_by("-created_at", "-pk").first()
    return bytes(check.thumbnail) if check is not None else None

"""A teacher's actions on pages: hide, show, feature, re-run the render check."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.exceptions import ValidationError
from django.db import transaction

from explainer.models import ModerationItem, PageVersion, RenderCheck
from explainer.selectors.review import page_latest_check_status
from explainer.services.render_checks import render_check_queue
from model_worker.contract.events import PageHidden, PageShown

logger = logging.getLogger(__name__)

PAGE_HIDDEN_EVENT = "page.hidden"
PAGE_SHOWN_EVENT = "page.shown"


def thread_group(thread_id) -> str:
    """Channel-layer group of every open socket showing a thread."""
    return f"thread_{thread_id}"


def class_group(classroom_id) -> str:
    """Channel-layer group of every open socket of a class's learners."""
    return f"class_{classroom_id}"


def _broadcast(page: PageVersion, event_type: str) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if event_type == PAGE_SHOWN_EVENT:  # a view that never listed the page needs its question and check too
        event = PageShown(page=page.pk, thread=str(page.thread_id), version=page.version,
                          question=page.generation.question if page.generation_id else "",
                          check=page_latest_check_status(page=page) or "")
    else:
        event = PageHidden(page=page.pk, thread=str(page.thread_id), version=page.version)
    # The channel layer's `type` names the consumer's handler; the event travels in its wire form.
    message = {"type": event_type, "event": event.to_wire()}
    groups = [thread_group(page.thread_id)]
    if page.thread.classroom_id:
        groups.append(class_group(page.thread.classroom_id))
    for group in groups:
        try:
            async_to_sync(layer.group_send)(group, message)
        except Exception:  # the row is the truth; a lost push only delays the learner's view until reload
            logger.exception("could not send %s to %s", event_type, group)


def page_set_hidden(*, page: PageVersion, hidden: bool) -> PageVersion:
    """Hide or show a page; hiding a featured page hides the copies of it that it gave other learners too
    (showing it again leaves them hidden: one may have been hidden for its own question). Open learner
    views hear of it as soon as the change commits."""
    with transaction.atomic():
        page = _set_hidden(page.pk, hidden)
        if hidden:
            for copy in PageVersion.objects.filter(generation__stats__featured_page=page.pk).exclude(pk=page.pk):
                _set_hidden(copy.pk, hidden)
    return page


def _set_hidden(page_id: int, hidden: bool) -> PageVersion:
    page = PageVersion.objects.select_for_update().select_related("thread").get(pk=page_id)
    if page.hidden != hidden:
        page.hidden = hidden
        page.save(update_fields=["hidden"])
    if hidden:
        page.moderation_items.filter(status=ModerationItem.Status.PENDING).update(status=ModerationItem.Status.HIDDEN)
    transaction.on_commit(lambda: _broadcast(page, PAGE_HIDDEN_EVENT if hidden else PAGE_SHOWN_EVENT))
    return page


class PageNotFeaturable(ValidationError):
    """The page failed its latest render check, so it may not answer other learners' questions."""


def page_set_featured(*, page: PageVersion, featured: bool) -> PageVersion:
    """A featured page answers the same question in its class from the library, without generating.

    Raises PageNotFeaturable when featuring a page whose latest render check failed.
    """
    if featured and page_latest_check_status(page=page) == RenderCheck.Status.FAILED:
        raise PageNotFeaturable(
            "This page failed its latest render check, so it was not featured: every learner it answered "
            "would get a broken page. Re-run the check (a busy machine can fail one), or feature a page that passed."
        )
    page.featured = featured
    page.save(update_fields=["featured"])
    return page


def page_recheck(*, page: PageVersion) -> None:
    """Queue the render check again for a page."""
    page_id = page.pk
    transaction.on_commit(lambda: render_check_queue(page_id=page_id))

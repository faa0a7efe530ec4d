"""Signed links to generated pages: page ids are sequential, so a link carries proof it was handed out.

The app gives a page's link only to viewers who may see it (the learner whose thread it is, their class
for featured pages, the class's teacher). The page origin has no session cookie, so the link itself is
the permission: a signed, expiring token bound to the page id.
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.urls import reverse

SALT = "explainer.page-link"


def page_token(page_id: int) -> str:
    return signing.dumps(page_id, salt=SALT, compress=False)


def token_grants(token: str | None, page_id: int) -> bool:
    """Whether `token` was signed here for exactly this page and has not expired."""
    if not token:
        return False
    try:
        return signing.loads(token, salt=SALT, max_age=settings.PAGE_LINK_TTL_S) == page_id
    except signing.BadSignature:  # also covers SignatureExpired
        return False


def token_expired(token: str | None, page_id: int) -> bool:
    """Whether `token` was signed here for exactly this page, and has expired since."""
    if not token:
        return False
    try:
        signed_for = signing.loads(token, salt=SALT)  # the signature alone, however old
    except signing.BadSignature:
        return False
    return signed_for == page_id and not token_grants(token, page_id)


def page_link(page_id: int) -> str:
    """The page's URL, on `PAGE_ORIGIN` when set, else on this server."""
    return f"{settings.PAGE_ORIGIN}{reverse('page_view', args=[page_id])}?k={page_token(page_id)}"


def download_link(page_id: int) -> str:
    """The signed link to the page as one self-contained file."""
    return f"{settings.PAGE_ORIGIN}{reverse('page_download', args=[page_id])}?k={page_token(page_id)}"


def thumbnail_link(page_id: int) -> str:
    return f"{reverse('page_thumbnail', args=[page_id])}?k={page_token(page_id)}"

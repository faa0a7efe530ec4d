"""Where the library's thumbnails are: the render check's picture of each page, made once by
`manage.py library_thumbnails` for the corpus and stored with the page for a class's own pages."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

from explainer.models import LibraryPage

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def thumbnail_file(slug: str) -> Path:
    """The PNG file of a corpus page's thumbnail (it may not have been made yet)."""
    if not _SLUG.fullmatch(slug):  # a slug names a file here: nothing else may
        raise ValueError(f"not a library slug: {slug!r}")
    return Path(settings.LIBRARY_THUMBNAILS_DIR) / f"{slug}.png"


def thumbnails_made(*, classroom=None) -> frozenset[str]:
    """The slugs whose thumbnail exists: corpus pages the command has pictured, and the class's own pages."""
    folder = Path(settings.LIBRARY_THUMBNAILS_DIR)
    made = {path.stem for path in folder.glob("*.png")} if folder.is_dir() else set()
    if classroom is not None:  # a class's page stands in for the corpus page of its slug, picture and all
        rows = LibraryPage.objects.filter(classroom=classroom)
        made -= set(rows.values_list("slug", flat=True))
        made |= set(rows.filter(thumbnail__isnull=False).values_list("slug", flat=True))
    return frozenset(made)


def library_thumbnail(*, slug: str, classroom=None) -> bytes | None:
    """A library page's thumbnail PNG: the class's own page when it has one by that slug, else the corpus
    page's; None when none was made."""
    if classroom is not None:
        row = LibraryPage.objects.filter(classroom=classroom, slug=slug).only("thumbnail").first()
        if row is not None:
            return bytes(row.thumbnail) if row.thumbnail else None
    if not _SLUG.fullmatch(slug):
        return None
    path = thumbnail_file(slug)
    try:
        return path.read_bytes()
    except OSError:
        return None

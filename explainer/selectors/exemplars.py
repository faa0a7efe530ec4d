"""The corpus's exemplar pages, which a teacher can pin to a topic."""

from __future__ import annotations

import functools

from model_worker.corpus import load_pages


@functools.cache
def _pages() -> dict:
    return {page.slug: page for page in load_pages()}


def exemplar_choices() -> list[tuple[str, str]]:
    """(slug, "title (language)") of every exemplar page, by title."""
    pages = sorted(_pages().values(), key=lambda p: p.title)
    return [(p.slug, f"{p.title} ({p.lang})") for p in pages]


def exemplar_html(slug: str) -> str | None:
    """The page's HTML, or None for a slug the corpus does not have."""
    page = _pages().get(slug)
    return page.html if page else None


def exemplar_page(slug: str):
    """The corpus page (its `slug`, `title`, `lang`, `html`), or None for a slug the corpus does not have."""
    return _pages().get(slug)

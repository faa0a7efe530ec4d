"""What the app's router makes of a question, for tests whose expectations depend on the library's words."""

from __future__ import annotations

from explainer.library.records import LibraryPage


def nearest_page(question: str, lang: str = "en") -> LibraryPage:
    """The page the app's router offers first for a question (the corpus library, no class pages)."""
    from explainer.library.router import route_question
    from explainer.selectors.library import index_for, library_pages

    return route_question(index_for(library_pages()), question, lang).nearest[0]

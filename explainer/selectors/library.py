"""Reads of the library: its pages, its index, routes for questions, example questions for the home page."""

from __future__ import annotations

import functools

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from explainer.library.index import LibraryIndex
from explainer.library.learned import with_variants
from explainer.library.records import LibraryPage, corpus_records, record_from_class_page
from explainer.library.router import DEFAULT_THRESHOLD, Route, route_question, route_to_page


@functools.cache
def _corpus_pages() -> tuple[LibraryPage, ...]:
    return tuple(corpus_records(settings.LIBRARY_DIR))


def library_pages(*, classroom=None) -> tuple[LibraryPage, ...]:
    """Every page the library holds for a learner: the corpus, and with `classroom` the pages its teachers
    added (a class page with a corpus page's slug stands in for it)."""
    if classroom is None:
        return _corpus_pages()
    from explainer.selectors.library_pages import library_pages as class_pages

    added = {r.slug: record_from_class_page(r) for r in class_pages(classroom=classroom)}
    if not added:
        return _corpus_pages()
    return tuple(p for p in _corpus_pages() if p.slug not in added) + tuple(added.values())


@functools.lru_cache(maxsize=32)
def index_for(pages: tuple[LibraryPage, ...], wrong: tuple[tuple[str, str], ...] = ()) -> LibraryIndex:
    """The index over these records (and the questions teachers said a page answers wrongly), built once while
    it is among the 32 last used (a class's library, its topics)."""
    return LibraryIndex(pages, wrong=wrong)


def shipped_index() -> LibraryIndex:
    """The index over the library as shipped, with nothing learned and no database read: what `manage.py
    explain` routes with, and what `manage.py relevance` measures."""
    return index_for(library_pages())


def library_index(*, classroom=None) -> LibraryIndex:
    """The index over `library_pages(classroom=...)` with what the router learned for that library
    (`selectors.learned_routes`), cached by both: a page a teacher adds or deletes, a learner's pick or a
    teacher's correction makes a new index on the class's next question, with no restart."""
    from explainer.selectors.learned_routes import learned_routes

    learned = learned_routes(classroom=classroom)
    return index_for(with_variants(library_pages(classroom=classroom), learned.variants), learned.wrong)


def library_page_html(*, slug: str, classroom=None) -> str | None:
    """The stored HTML of a library page of the learner's library: the corpus file, or the class's page (found
    among the pages, with no index: what the router learned does not change them)."""
    page = next((p for p in library_pages(classroom=classroom) if p.slug == slug), None)
    if page is None:
        return None
    if page.source == "class" and classroom is not None:
        from explainer.selectors.library_pages import library_page_for

        record = library_page_for(classroom=classroom, slug=page.slug)
        return record.html if record else None
    from explainer.selectors.exemplars import exemplar_html

    return exemplar_html(page.slug)


def library_check() -> int:
    """Load the library's records, or raise `ImproperlyConfigured` naming the file that is wrong."""
    from explainer.library.outside import outside_questions
    from model_worker.corpus import CorpusError

    folder = settings.LIBRARY_DIR / "pages"
    try:
        pages = library_pages()
    except CorpusError as exc:
        raise ImproperlyConfigured(f"The library index in {folder} is corrupt: {exc}") from exc
    except OSError as exc:
        raise ImproperlyConfigured(f"The library index in {folder} cannot be read: {exc}") from exc
    if not pages:
        raise ImproperlyConfigured(f"The library index in {folder} is empty: no <slug>.json page records.")
    try:
        outside_questions()
    except ValueError as exc:
        raise ImproperlyConfigured(f"The router's outside set is corrupt: {exc}") from exc
    return len(pages)


def question_route(*, question: str, lang: str, picked: str | None = None, classroom=None) -> Route | None:
    """The library route of a question (over the class's library with `classroom`); with `picked` (a page
    slug the learner clicked) that topic, or None for a slug the library lacks."""
    index = library_index(classroom=classroom)
    if picked is not None:
        return route_to_page(index, picked, lang)
    return route_question(index, question, lang, threshold=DEFAULT_THRESHOLD)


def thread_route(*, slug: str, lang: str, classroom=None) -> Route | None:
    """The route of a follow-up: the thread's topic, in the asked language when the topic has it."""
    return route_to_page(library_index(classroom=classroom), slug, lang)


def library_examples(*, lang: str, count: int = 4, writable: frozenset[str] | None = None) -> list[str]:
    """Questions the library answers with a page in `lang`: the first question of `count` pages spread
    over the library (all pages when none is in `lang`). With `writable` (the pages a library-only
    backend can write) those pages are chosen, so that an example shows a page being written, not a
    stored one; the others only when none of them is in `lang`."""
    pages = [p for p in library_pages() if p.lang == lang] or list(library_pages())
    if writable is not None:
        pages = [p for p in pages if p.slug in writable] or pages
    chosen = pages[:: max(1, len(pages) // count)][:count]
    return [(p.questions_zh if lang == "zh" else p.questions_en)[0] for p in chosen]

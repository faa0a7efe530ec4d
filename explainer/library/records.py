"""Library pages as the router sees them: one `LibraryPage` record per page, from any source.

Today every record comes from the exemplar corpus (`model_worker.corpus`); pages teachers add will
come from the database as the same records. A record's `topic` groups the language versions of one
topic; a corpus record without a `topic` field is a topic of its own (its slug).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_INTRO = re.compile(r"""\bintro\s*:\s*(["'`])((?:\\.|(?!\1).)*)\1""", re.S)


@dataclass(frozen=True)
class LibraryPage:
    slug: str
    topic: str  # shared by the language versions of one topic
    title: str
    lang: str  # "en" | "zh": the language the page is written in
    tags: tuple[str, ...] = ()
    questions_en: tuple[str, ...] = ()
    questions_zh: tuple[str, ...] = ()
    intro: str = ""

    def summary(self) -> dict:
        """The page as the protocol names it: `{"slug", "title", "lang"}`."""
        return {"slug": self.slug, "title": self.title, "lang": self.lang}


def page_intro(html: str) -> str:
    """The kit page's `intro` text (the sentence or two under its title), or "" when it has none."""
    match = _INTRO.search(html)
    if match is None:
        return ""
    quote, body = match.groups()
    if quote != '"':  # a '...' or `...` string: its escapes as a JSON string's
        body = re.sub(r'(?<!\\)"', r'\\"', body.replace("\\" + quote, quote))
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return body


def record_from_corpus(page) -> LibraryPage:
    """A `model_worker.corpus.Page` as a record; its `topic` field when it has one, else its slug."""
    return LibraryPage(
        slug=page.slug,
        topic=getattr(page, "topic", None) or page.slug,
        title=page.title,
        lang=page.lang,
        tags=tuple(page.tags),
        questions_en=tuple(page.questions_en),
        questions_zh=tuple(page.questions_zh),
        intro=page_intro(page.html),
    )


def corpus_records(corpus_dir: Path | None = None) -> list[LibraryPage]:
    """Every exemplar page of the corpus as a record (`CorpusError` names a bad file)."""
    from model_worker.corpus import CORPUS_DIR, load_pages

    return [record_from_corpus(p) for p in load_pages(corpus_dir or CORPUS_DIR)]

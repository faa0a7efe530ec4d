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
_MODULE = re.compile(r"<script\b[^>]*type=[\"']?module[\"']?[^>]*>(.*?)</script>", re.S | re.I)
_STRING = re.compile(r"""(["'`])((?:\\.|(?!\1)[^\\\n])*)\1""")
_CJK = re.compile(r"[\u3400-\u9fff]")


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
    body: str = ""  # the page's visible text: part explanations, steps, quiz, labels
    # "corpus" (the shipped library) | "class" (a page a class's teacher added) | "topic" (a class's curated
    # topic, which has no page: `explainer.library.class_topics`)
    source: str = "corpus"

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


def _visible(literal: str) -> bool:
    """A string a learner reads (a sentence, a name), not a colour, a path or an identifier."""
    if _CJK.search(literal):
        return True
    if literal.startswith("#") or "${" in literal or not re.search(r"[A-Za-z]{2}", literal):
        return False
    return " " in literal.strip() or literal[:1].isupper()


def page_text(html: str) -> str:
    """The visible text of a kit page: every string of its module script that a learner reads, one a line."""
    seen: dict[str, None] = {}
    for script in _MODULE.findall(html):
        for _, literal in _STRING.findall(script):
            text = literal.replace("\\n", " ").strip()
            if text and _visible(text):
                seen.setdefault(text, None)
    return "\n".join(seen)


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
        body=page_text(page.html),
    )


def record_from_class_page(page) -> LibraryPage:
    """A page a teacher added (`explainer.selectors.library_pages.LibraryRecord`) as a router record."""
    from explainer.library.text import question_language

    questions = [(question_language(q)[0], q) for q in page.questions]
    return LibraryPage(
        slug=page.slug,
        topic=page.topic,
        title=page.title,
        lang=page.lang,
        questions_en=tuple(q for lang, q in questions if lang != "zh"),
        questions_zh=tuple(q for lang, q in questions if lang == "zh"),
        intro=page_intro(page.html),
        body=page_text(page.html),
        source="class",
    )


def corpus_records(corpus_dir: Path | None = None) -> list[LibraryPage]:
    """Every exemplar page of the corpus as a record (`CorpusError` names a bad file)."""
    from model_worker.corpus import CORPUS_DIR, load_pages

    return [record_from_corpus(p) for p in load_pages(corpus_dir or CORPUS_DIR)]

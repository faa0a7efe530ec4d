"""Questions the router learned (`explainer.models.LearnedRoute`) as the index sees them.

A learned variant is one more of its page's questions, in the language it was asked in: it counts in the
router's scoring as the page's own questions do, words and sentence similarity alike. A question a teacher said
a page answers wrongly goes to the index as `wrong` (`LibraryIndex`), where it and its near paraphrases score
nothing on that page's topic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from explainer.library.records import LibraryPage
from explainer.library.text import question_language


@dataclass(frozen=True)
class Learned:
    variants: tuple[tuple[str, str], ...] = ()  # (page slug, question): questions the page answers
    wrong: tuple[tuple[str, str], ...] = ()  # (page slug, question): questions the page must not answer


NOTHING = Learned()


def with_variants(pages: Iterable[LibraryPage], variants: Iterable[tuple[str, str]]) -> tuple[LibraryPage, ...]:
    """The pages, each with its learned variants added to its questions (a slug the library lacks is skipped)."""
    extra: dict[str, list[str]] = {}
    for slug, question in variants:
        extra.setdefault(slug, []).append(question)
    out = []
    for page in pages:
        questions = [q for q in extra.get(page.slug, ()) if q not in page.questions_en + page.questions_zh]
        if questions:
            zh = tuple(q for q in questions if question_language(q)[0] == "zh")
            en = tuple(q for q in questions if q not in zh)
            page = dataclasses.replace(page, questions_en=page.questions_en + en, questions_zh=page.questions_zh + zh)
        out.append(page)
    return tuple(out)

"""A BM25 index (bm25s) over library records, scored per topic.

Each page is one document: its title, tags, questions in both languages and intro. (Scoring each of
those texts alone and keeping the best did worse on tests/data/router_questions.json: a paraphrase
shares a word with the title and another with a question.) A topic's score for a question is the best
score of its pages, divided by what an average-length document holding each of the question's
terms once would score (the sum of the terms' idf), so that it reads as "how much of the question
this topic covers" and one threshold fits short and long questions alike.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from explainer.library.records import LibraryPage
from explainer.library.tokens import terms


class EmptyLibrary(ValueError):
    """The library has no pages, so no question can be routed."""


@dataclass(frozen=True)
class TopicScore:
    topic: str
    score: float  # 0 (nothing in common) to about 1 (every term of the question, in one page)


def page_document(page: LibraryPage) -> str:
    """The text of one page that a question is matched against."""
    return "\n".join([page.title, " ".join(page.tags), *page.questions_en, *page.questions_zh, page.intro])


class LibraryIndex:
    """BM25 over every page's documents; `scores()` ranks the topics for a question."""

    def __init__(self, pages: Iterable[LibraryPage]):
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on import: a line per build
        self.pages = tuple(pages)
        if not self.pages:
            raise EmptyLibrary("the library has no pages")
        self.by_slug = {p.slug: p for p in self.pages}
        if len(self.by_slug) != len(self.pages):
            raise ValueError("two library pages share a slug")
        self.topics: dict[str, list[LibraryPage]] = {}
        for page in self.pages:
            self.topics.setdefault(page.topic, []).append(page)
        docs, owners = [], []
        for page in self.pages:
            docs.append(terms(page_document(page)))
            owners.append(page.topic)
        self._owners = owners
        self._topic_names = list(self.topics)
        self._bm25 = bm25s.BM25()
        self._bm25.index(docs, show_progress=False)
        df = Counter(t for doc in docs for t in set(doc))
        n = len(docs)
        # Lucene's idf, as bm25s scores with by default; an unseen term gets the largest.
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self._idf_unseen = math.log(1 + (n + 0.5) / 0.5)

    def __len__(self) -> int:
        return len(self.pages)

    def with_pages(self, pages: Iterable[LibraryPage]) -> LibraryIndex:
        """A new index with these pages added (a page with an indexed slug replaces it)."""
        merged = dict(self.by_slug)
        for page in pages:
            merged[page.slug] = page
        return LibraryIndex(merged.values())

    def scores(self, question: str) -> list[TopicScore]:
        """Every topic with its score for the question, best first (ties by topic name)."""
        query = list(dict.fromkeys(terms(question)))
        if not query:
            return [TopicScore(t, 0.0) for t in sorted(self._topic_names)]
        raw = self._bm25.get_scores(query)
        best: dict[str, float] = {}
        for owner, score in zip(self._owners, raw, strict=True):
            if score > best.get(owner, 0.0):
                best[owner] = float(score)
        ceiling = sum(self._idf.get(t, self._idf_unseen) for t in query)
        ranked = [TopicScore(t, round(best.get(t, 0.0) / ceiling, 4)) for t in self._topic_names]
        return sorted(ranked, key=lambda s: (-s.score, s.topic))

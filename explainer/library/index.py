"""A BM25 index (bm25s) over library records, scored per topic.

A page's text comes in two fields: its *head* (title, tags, questions in both languages, intro) and
its *body* (the visible text of its script: part explanations, steps, quiz). A recipe says how they are
indexed: `joined` makes one document per page (the head repeated `head_weight` times, then the body);
`best-field` indexes heads and bodies apart and keeps a page's better field, the body's score weighed
by `body_weight`. A topic's *match* for a question is the best score of its pages, divided by what an
average-length document holding each of the question's terms once would score (the sum of the terms'
idf), so that one threshold fits short and long questions alike. Its *coverage* is the share of the
question's terms, weighed by idf over the topics, that occur in the topic's pages (a term only in a
body counting as the body's score does against a head's). The
topic's score is the geometric mean of the two: BM25 alone rates a question by its strongest words,
so "How do bees make honey?" scored high on the flower page for "bee" alone; coverage asks that the
topic speak of the rest of the question too (honey), and a question whose words all occur in a page
but rarely still ranks by BM25. A recipe with a `semantic_weight` mixes in the topic's sentence
similarity to the question (`explainer.library.semantic`), which finds a topic asked in words its pages
never use, and across languages: the score is `(1 - w) * lexical + w * (similarity - 0.3) / 0.5`, the
similarity's share above the level of unrelated text (about 0.2-0.3) counted from 0 (0.3 or less) to
1 (0.8, a paraphrase). A recipe with an `outside_penalty` also compares the question with the outside
set (`explainer.library.outside`, questions no page answers): where one of those is closer to the
question than the topic's closest sentence, the score loses `outside_penalty` times the difference in
cosine. `manage.py relevance --recipes` compares the recipes on the question set.
"""

from __future__ import annotations

import functools
import logging
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from explainer.library.records import LibraryPage
from explainer.library.text import question_key
from explainer.library.tokens import Analyzer

# The sentence similarity that counts as nothing in common, and the span above it that counts as 1.
SEMANTIC_FLOOR = 0.3
SEMANTIC_SPAN = 0.5
# A question this close (cosine) to one a teacher said a topic answers wrongly is a paraphrase of it: the topic
# scores nothing for it (about 0.8 is a paraphrase, and unrelated text lands near 0.2-0.3).
WRONG_NEAR = 0.8


class EmptyLibrary(ValueError):
    """The library has no pages, so no question can be routed."""


@dataclass(frozen=True)
class TopicScore:
    topic: str
    score: float  # the recipe's mix of the signals below: 0 (nothing in common) to about 1
    match: float = 0.0  # BM25 share: 0 to about 1 (every term of the question, in one page)
    coverage: float = 0.0  # idf-weighted share of the question's terms found in the topic's pages
    semantic: float = 0.0  # sentence similarity (cosine) of the question to the topic's head texts
    outside: float = 0.0  # what the outside set took off the score: an outside question is closer than the topic
    wrong: bool = False  # a teacher said the topic answers this question (or one it paraphrases) wrongly: scores 0

    @property
    def nearness(self) -> float:
        """The score before the outside set's share: how near the topic is, whether or not it answers."""
        return round(self.score + self.outside, 4)


@dataclass(frozen=True)
class IndexRecipe:
    name: str
    analyzer: Analyzer
    body: bool = True  # index the page's visible text too
    fields: str = "joined"  # "joined" | "best-field"
    head_weight: int = 1  # joined: times the head is repeated before the body
    body_weight: float = 1.0  # best-field: what a body score counts for against a head score
    concept_weight: int = 1  # times a glossary concept of the question counts, against one word
    coverage: bool = True  # score by sqrt(match * coverage) rather than by the BM25 match alone
    k1: float = 1.5  # BM25 term-frequency saturation (bm25s's default); lower: covering more of the question counts more
    semantic_weight: float = 0.0  # the sentence similarity's share of the score (0: words alone)
    # Taken off a topic's score per unit of cosine by which the closest outside question beats the topic's
    # closest sentence (0: no outside set).
    outside_penalty: float = 0.0


# The variants `manage.py relevance --recipes` compares (docs/benchmarks.md, Router).
RECIPES = {
    r.name: r for r in (
        # The first router: one document of head text; jieba words and single characters.
        IndexRecipe("head", Analyzer(pairs=False, glossary=False), body=False, coverage=False),
        IndexRecipe("head+pairs", Analyzer(glossary=False), body=False, coverage=False),
        IndexRecipe("head+glossary", Analyzer(), body=False, concept_weight=3, coverage=False),
        IndexRecipe("joined", Analyzer(), head_weight=3, concept_weight=3, coverage=False),
        IndexRecipe("best-field", Analyzer(), fields="best-field", body_weight=0.5, concept_weight=3,
                    coverage=False),
        IndexRecipe("best-field+coverage", Analyzer(), fields="best-field", body_weight=0.5, concept_weight=3),
        IndexRecipe("semantic", Analyzer(), fields="best-field", body_weight=0.5, concept_weight=3,
                    semantic_weight=1.0),
        # Words and sentence similarity: the weight chosen on the calibration and held-out halves.
        IndexRecipe("best-field+coverage+semantic", Analyzer(), fields="best-field", body_weight=0.5,
                    concept_weight=3, semantic_weight=0.4),
        # ... and the outside set: the penalty chosen on the calibration and held-out halves (4 and more
        # do the same there: a question closer to an outside question than to the topic is refused).
        IndexRecipe("best-field+coverage+semantic+outside", Analyzer(), fields="best-field", body_weight=0.5,
                    concept_weight=3, semantic_weight=0.4, outside_penalty=4.0),
    )
}
DEFAULT_RECIPE = RECIPES["best-field+coverage+semantic+outside"]


def page_head(page: LibraryPage) -> str:
    """The text that says what a page is about: title, tags, its questions in both languages, intro."""
    return "\n".join([page.title, " ".join(page.tags), *page.questions_en, *page.questions_zh, page.intro])


@functools.lru_cache(maxsize=4096)
def _page_terms(analyzer: Analyzer, text: str) -> tuple[str, ...]:
    """A page field's terms, kept: a class's index is rebuilt whenever its teacher changes a page or a topic,
    and analysing the library's 160 pages again took a second and more."""
    return tuple(analyzer.terms(text))


class _Field:
    """BM25 over one document per page, and the idf of its terms for the score's ceiling."""

    def __init__(self, docs: list[list[str]], k1: float):
        import bm25s

        self.bm25 = bm25s.BM25(k1=k1)
        self.bm25.index(docs, show_progress=False)
        df = Counter(t for doc in docs for t in set(doc))
        n = len(docs)
        # Lucene's idf, as bm25s scores with by default; an unseen term gets the largest.
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.idf_unseen = math.log(1 + (n + 0.5) / 0.5)

    def scores(self, query: list[str]) -> list[float]:
        """Each document's score, as a share of the ceiling."""
        ceiling = sum(self.idf.get(t, self.idf_unseen) for t in query)
        return [float(s) / ceiling for s in self.bm25.get_scores(query)]


class LibraryIndex:
    """BM25 over every page's fields; `scores()` ranks the topics for a question."""

    def __init__(self, pages: Iterable[LibraryPage], recipe: IndexRecipe = DEFAULT_RECIPE, *, encoder=None,
                 wrong: Iterable[tuple[str, str]] = ()):
        """`encoder`: the sentence encoder of the semantic share (default: the process's, which keeps every text).
        `wrong`: (page slug, question) pairs a teacher said the page answers wrongly: that question, and its near
        paraphrases (`WRONG_NEAR`), score nothing on the page's topic."""
        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on import: a line per build
        self.recipe = recipe
        self._encoder = encoder
        self.pages = tuple(pages)
        if not self.pages:
            raise EmptyLibrary("the library has no pages")
        self.by_slug = {p.slug: p for p in self.pages}
        if len(self.by_slug) != len(self.pages):
            raise ValueError("two library pages share a slug")
        self.topics: dict[str, list[LibraryPage]] = {}
        for page in self.pages:
            self.topics.setdefault(page.topic, []).append(page)
        self._owners = [p.topic for p in self.pages]
        self.wrong = tuple((slug, q) for slug, q in wrong if slug in self.by_slug)
        self._wrong_keys = {(self.by_slug[slug].topic, question_key(q)) for slug, q in self.wrong}
        heads = [list(_page_terms(recipe.analyzer, page_head(p))) for p in self.pages]
        bodies = [list(_page_terms(recipe.analyzer, p.body)) if recipe.body else [] for p in self.pages]
        # Which terms each topic's pages hold, in their heads and in their bodies, and how rare each term
        # is among the topics.
        self._topic_heads: dict[str, set[str]] = {}
        self._topic_bodies: dict[str, set[str]] = {}
        for page, head, body in zip(self.pages, heads, bodies, strict=True):
            self._topic_heads.setdefault(page.topic, set()).update(head)
            self._topic_bodies.setdefault(page.topic, set()).update(body)
        topic_df = Counter(t for topic in self.topics
                           for t in self._topic_heads[topic] | self._topic_bodies[topic])
        n = len(self.topics)
        self._topic_idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in topic_df.items()}
        self._topic_idf_unseen = math.log(1 + (n + 0.5) / 0.5)
        if recipe.fields == "best-field":
            self._fields = [(_Field(heads, recipe.k1), 1.0)]
            if any(bodies):  # bm25s divides by the average length: no field of empty documents
                self._fields.append((_Field(bodies, recipe.k1), recipe.body_weight))
        else:
            joined = [h * recipe.head_weight + b for h, b in zip(heads, bodies, strict=True)]
            self._fields = [(_Field(joined, recipe.k1), 1.0)]
        self._semantic = None
        if recipe.semantic_weight:
            from explainer.library.outside import outside_questions
            from explainer.library.semantic import SemanticField

            self._semantic = SemanticField(self.pages, encoder,
                                           outside=outside_questions() if recipe.outside_penalty else (),
                                           wrong=[(self.by_slug[slug].topic, q) for slug, q in self.wrong])

    def __len__(self) -> int:
        return len(self.pages)

    def with_pages(self, pages: Iterable[LibraryPage]) -> LibraryIndex:
        """A new index with these pages added (a page with an indexed slug replaces it)."""
        merged = dict(self.by_slug)
        for page in pages:
            merged[page.slug] = page
        return LibraryIndex(merged.values(), self.recipe, encoder=self._encoder, wrong=self.wrong)

    def scores(self, question: str) -> list[TopicScore]:
        """Every topic with its score for the question, best first (ties by topic name)."""
        query = list(dict.fromkeys(self.recipe.analyzer.terms(question)))
        query += [t for t in query if t.startswith("~")] * (self.recipe.concept_weight - 1)
        best: dict[str, float] = {}
        if query:
            for field, weight in self._fields:
                for owner, score in zip(self._owners, field.scores(query), strict=True):
                    best[owner] = max(best.get(owner, 0.0), score * weight)
        similar = self._semantic.similarities(question) if self._semantic and question.strip() else None
        weight = self.recipe.semantic_weight
        key = question_key(question)
        ranked = []
        for topic in self.topics:
            if (topic, key) in self._wrong_keys or (similar and similar.wrong.get(topic, -1.0) >= WRONG_NEAR):
                ranked.append(TopicScore(topic, 0.0, wrong=True))
                continue
            match = best.get(topic, 0.0)
            coverage = self.coverage(query, topic) if match > 0 else 0.0
            score = math.sqrt(match * coverage) if self.recipe.coverage else match
            semantic = similar.topics.get(topic, 0.0) if similar else 0.0
            if weight:
                share = max(0.0, (semantic - SEMANTIC_FLOOR) / SEMANTIC_SPAN)
                score = (1 - weight) * score + weight * share
            outside = 0.0
            if similar and self.recipe.outside_penalty:
                outside = min(score, self.recipe.outside_penalty * max(0.0, similar.outside - similar.closest[topic]))
                score -= outside
            ranked.append(TopicScore(topic, round(score, 4), round(match, 4), round(coverage, 4), round(semantic, 4),
                                     round(outside, 4)))
        return sorted(ranked, key=lambda s: (-s.score, s.topic))

    def coverage(self, query: list[str], topic: str) -> float:
        """The idf-weighted share of the query's terms that occur in the topic's pages; a term only in a
        body counts `body_weight` of one in a head, as in the match (a page that names a thing in passing
        is not about it: the ear's page mentions a yawn)."""
        weights = {t: self._topic_idf.get(t, self._topic_idf_unseen) for t in query}
        total = sum(weights.values())
        head, body = self._topic_heads[topic], self._topic_bodies[topic]
        body_weight = self.recipe.body_weight if self.recipe.fields == "best-field" else 1.0
        held = sum(w * (1.0 if t in head else body_weight if t in body else 0.0) for t, w in weights.items())
        return held / total if total else 0.0

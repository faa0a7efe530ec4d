"""Score labelled class questions both ways: the old topic-space matcher against the library router.

Run: `.venv/bin/python scripts/topic_space_compare.py [-v] [--json]` (docs/teacher.md, "Class topics"). For
each question set (tests/explainer/teacher/data/topic_space.json's `dev` and `test` splits, and
class_questions.json, asked in the demo class) it prints, for the old matcher (TF-IDF at 0.10), the router
(`explainer.library.choice`) and the router with each topic's library page pinned to it: how many
questions each keeps under a topic, and whether under the right one; how many of the others it refuses;
and, for the router, how many refusals are unsure with the right topic offered first. `-v` lists what each
gets wrong.

The old matcher lives here only, frozen as it was removed from explainer/selectors/topic_space.py, so the
comparison can be run again; the product has one question matcher, the router.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "explainer" / "teacher" / "data"
# The library page a teacher would pin to each topic of the sets (`Topic.exemplar`).
PINS = {"The solar system": "solar-system", "Photosynthesis": "photosynthesis", "Magnetism": "magnetism",
        "The water cycle": "water-cycle"}


# --- The old matcher, frozen: TF-IDF cosine over words, word pieces and Chinese characters. -------------
OLD_THRESHOLD = 0.10
_EN_STOP = frozenset(
    """a an the is are was were be been being am do does did doing done have has had of to in on at by for
    from with about into over under as and or but not no so if then than that this these those there here it
    its it's they them their we us our you your he she him her i me my what whats what's why how when where
    which who whom whose can could would should will shall may might must make makes made get gets got
    happen happens happened some any all more most much many very really just also like explain tell show
    please thing things work works way ways use used using need needs kind different between""".split()
)
_ZH_STOP = frozenset("的了吗呢吧啊是么什怎为何如会能在有和与就都也还要把被让这那个一些种样请讲说我你他它们")
_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff]+")
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


def _stem(word: str) -> str:
    for suffix in ("ies", "ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _features(text: str) -> Counter:
    text = " ".join(unicodedata.normalize("NFKC", text).lower().split())
    bag: Counter = Counter()
    for word in _WORD.findall(text):
        if word in _EN_STOP or len(word) < 2:
            continue
        stem = _stem(word)
        bag["w:" + stem] += 1.0
        padded = f"<{stem}>"
        for i in range(len(padded) - 3):
            bag["c:" + padded[i : i + 4]] += 0.3
    for run in _CJK.findall(text):
        chars = [c for c in run if c not in _ZH_STOP]
        for c in chars:
            bag["z:" + c] += 0.5
        for a, b in zip(chars, chars[1:], strict=False):
            bag["b:" + a + b] += 1.0
    return bag


class OldMatcher:
    """The old topic space: a question is on the topic of best cosine (whole description or one text) >= 0.10."""

    def __init__(self, topics: list[dict]):
        self.titles = [t["title"] for t in topics]
        texts = [tuple(x for x in (t["title"], *t["seed_questions"], t["note_to_model"]) if x.strip())
                 for t in topics]
        corpus = [_features(x) for ts in texts for x in ts] + [_features(q) for q in _BACKGROUND]
        df: Counter = Counter()
        for bag in corpus:
            df.update(bag.keys())
        n = len(corpus)
        self._idf = {f: math.log((n + 1) / (c + 1)) + 1.0 for f, c in df.items()}
        self._idf_unseen = math.log(n + 1) + 1.0
        self._vectors = [[self._vector(sum((_features(x) for x in ts), Counter()))]
                         + [self._vector(_features(x)) for x in ts] for ts in texts]

    def _vector(self, bag: Counter) -> dict[str, float]:
        vec = {f: (1.0 + math.log(w) if w >= 1 else w) * self._idf.get(f, self._idf_unseen) for f, w in bag.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {f: v / norm for f, v in vec.items()}

    def topic(self, question: str) -> str | None:
        q = self._vector(_features(question))
        best, title = 0.0, None
        for name, vectors in zip(self.titles, self._vectors, strict=True):
            score = max(sum(q.get(f, 0.0) * v for f, v in vec.items()) for vec in vectors)
            if score > best:
                best, title = score, name
        return title if best >= OLD_THRESHOLD else None
# --- end of the old matcher. ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Labelled:
    question: str
    lang: str
    kind: str  # "inside" | "near" | "outside"
    topic: str | None  # the title of the topic it is on; None for any topic (topic_space.json) or none


@dataclass(frozen=True)
class Answer:
    topic: str | None  # the topic it was filed under
    unsure: bool = False  # refused in the unsure band
    offered: str | None = None  # the first topic an unsure refusal offers


def question_sets() -> dict[str, tuple[list[dict], list[Labelled]]]:
    """Each set's topics and labelled questions."""
    spaced = json.loads((DATA / "topic_space.json").read_text(encoding="utf-8"))
    sets = {}
    for split in ("dev", "test"):
        questions = [Labelled(q, "zh" if _CJK.search(q) else "en", kind, None)
                     for kind in ("inside", "outside") for q in spaced[split][kind]]
        sets[f"topic_space.json {split}"] = (spaced["topics"], questions)
    asked = json.loads((DATA / "class_questions.json").read_text(encoding="utf-8"))
    sets["class_questions.json"] = (asked["topics"], [
        Labelled(q["question"], q["lang"], q["kind"], q["topic"]) for q in asked["questions"]])
    return sets


def old_answers(topics: list[dict], questions: list[Labelled]) -> list[Answer]:
    matcher = OldMatcher(topics)
    return [Answer(matcher.topic(q.question)) for q in questions]


def router_answers(topics: list[dict], questions: list[Labelled], *, pinned: bool = False) -> list[Answer]:
    """What the product decides: the class topics beside the corpus, chosen among by the router."""
    from explainer.library.choice import choose_topic
    from explainer.library.class_topics import ClassTopic, with_class_topics
    from explainer.library.index import LibraryIndex
    from explainer.library.records import corpus_records

    entries = [ClassTopic(key=f"class-topic:{n}", title=t["title"], questions=tuple(t["seed_questions"]),
                          note=t["note_to_model"], pinned=(PINS[t["title"]],) if pinned else ())
               for n, t in enumerate(topics)]
    titles = {e.key: e.title for e in entries}
    index = LibraryIndex(with_class_topics(corpus_records(), entries))
    out = []
    for q in questions:
        choice = choose_topic(index, q.question, titles)
        out.append(Answer(titles.get(choice.topic), choice.unsure,
                          titles[choice.nearest[0]] if choice.unsure and choice.nearest else None))
    return out


def right(q: Labelled, a: Answer) -> bool:
    """Filed as it should be: an inside question under its topic (any, where unlabelled), the others under none."""
    if q.kind != "inside":
        return a.topic is None
    return a.topic is not None and (q.topic is None or a.topic == q.topic)


@dataclass(frozen=True)
class Figures:
    inside: int
    others: int  # near misses and far questions
    kept: int  # questions filed under a topic
    kept_right: int  # ... inside questions under their own topic
    precision: float  # kept_right / kept
    recall: float  # kept_right / inside
    recall_en: float
    recall_zh: float
    others_refused: float  # share of the others filed under no topic
    near_refused: str  # near misses filed under no topic, "n/m" ("-" for a set without near misses)
    unsure_right_first: int  # inside questions refused as unsure with their own topic offered first
    others_unsure: int  # others refused as unsure (offered topics, not answered with one)


def figures(questions: list[Labelled], answers: list[Answer]) -> Figures:
    pairs = list(zip(questions, answers, strict=True))
    inside = [(q, a) for q, a in pairs if q.kind == "inside"]
    others = [(q, a) for q, a in pairs if q.kind != "inside"]
    near = [(q, a) for q, a in others if q.kind == "near"]
    kept = [(q, a) for q, a in pairs if a.topic is not None]
    kept_right = sum(right(q, a) for q, a in kept)

    def recall(lang: str) -> float:
        chosen = [(q, a) for q, a in inside if q.lang == lang]
        return round(sum(right(q, a) for q, a in chosen) / len(chosen), 2) if chosen else 1.0

    return Figures(
        inside=len(inside), others=len(others), kept=len(kept), kept_right=kept_right,
        precision=round(kept_right / len(kept), 2) if kept else 1.0,
        recall=round(kept_right / len(inside), 2), recall_en=recall("en"), recall_zh=recall("zh"),
        others_refused=round(sum(a.topic is None for _, a in others) / len(others), 2),
        near_refused=f"{sum(a.topic is None for _, a in near)}/{len(near)}" if near else "-",
        unsure_right_first=sum(1 for q, a in inside if a.unsure and (q.topic is None or a.offered == q.topic)),
        others_unsure=sum(1 for _, a in others if a.unsure),
    )


MATCHERS = {
    "old matcher": old_answers,
    "router": router_answers,
    "router, pages pinned": lambda topics, questions: router_answers(topics, questions, pinned=True),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list each matcher's wrong answers")
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args(argv)
    results = {}
    for name, (topics, questions) in question_sets().items():
        results[name] = {}
        for matcher, answer in MATCHERS.items():
            answers = answer(topics, questions)
            results[name][matcher] = asdict(figures(questions, answers))
            if args.verbose:
                for q, a in zip(questions, answers, strict=True):
                    if not right(q, a):
                        print(f"{name} | {matcher} | {q.kind} {q.question!r}: filed under {a.topic!r}"
                              + (f", unsure, offers {a.offered!r}" if a.unsure else ""), file=sys.stderr)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
        return 0
    print("| set | matcher | kept (right) | precision | recall (en / zh) | others refused | near misses refused "
          "| unsure: own topic first / others |")
    print("|---|---|---|---|---|---|---|---|")
    for name, by_matcher in results.items():
        for matcher, f in by_matcher.items():
            unsure = "-" if matcher == "old matcher" else f"{f['unsure_right_first']} / {f['others_unsure']}"
            print(f"| {name} ({f['inside']} in, {f['others']} not) | {matcher} | {f['kept']} ({f['kept_right']}) "
                  f"| {f['precision']:.2f} | {f['recall']:.2f} ({f['recall_en']:.2f} / {f['recall_zh']:.2f}) "
                  f"| {f['others_refused']:.2f} | {f['near_refused']} | {unsure} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

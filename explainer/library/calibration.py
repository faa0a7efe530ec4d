"""The router measured on a labelled question set: precision, recall, refusals, and the threshold.

A question set is JSON: `{"questions": [{"lang", "question", "topic", "also"?, "split"}, ...]}`.
`topic` is the topic key the question is about; the question is in-library when the index has that
topic and out-of-library otherwise, so the set follows the library as pages are added. `also` names
other topics that answer it as well; `split` ("calibration" | "held-out" | "fresh" | "fresh-2" |
"near-miss") is fixed in the file: the threshold is calibrated on the calibration half and measured on the
others; `fresh` and `fresh-2` were written blind to the router and are never tuned on. `near-miss` holds the
hard cases, in pairs (`pair`, `half`: a question and a later paraphrase of it), of two `kind`s: "neighbour",
a subject next to the library topic `near` that no page answers, and "far-words", a library topic in words
far from its lesson's; it is reported apart (`explainer.library.near_miss`) and in no whole-set figure.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from explainer.library.index import LibraryIndex
from explainer.library.router import DEFAULT_THRESHOLD, NEAREST, NEAREST_FLOOR, UNSURE_FLOOR, by_nearness

QUESTION_SET = Path(__file__).resolve().parents[2] / "tests" / "data" / "router_questions.json"
SPLITS = ("calibration", "held-out", "fresh", "fresh-2", "near-miss")
APART = ("near-miss",)  # splits reported apart, in no whole-set figure
HALVES = ("first", "second")  # a near-miss pair: the question acted on, and its paraphrase asked later
KINDS = ("neighbour", "far-words")


@dataclass(frozen=True)
class LabelledQuestion:
    lang: str
    question: str
    topic: str  # the topic key it is about, whether or not the library has it
    split: str  # one of SPLITS
    also: tuple[str, ...] = ()  # other topics that answer it as well
    pair: str = ""  # near-miss: the pair's id, shared by a question and its paraphrase
    half: str = ""  # near-miss: one of HALVES
    kind: str = ""  # near-miss: one of KINDS
    near: str = ""  # a near-miss neighbour: the library topic it sits next to


@dataclass(frozen=True)
class Verdict:
    question: LabelledQuestion
    topic: str  # the best-scoring topic
    score: float
    expected: frozenset[str]  # the library's topics that answer it; empty: out of library
    nearest: str = ""  # the nearest topic, the one a refusal offers first (`TopicScore.nearness`)
    nearness: float = 0.0
    offered: tuple[str, ...] = ()  # the nearest topics a refusal offers, nearest first (`Route.nearest`)

    def routed(self, threshold: float) -> bool:
        return self.score >= threshold

    def unsure(self, threshold: float) -> bool:
        """Refused, with the nearest topic close enough that the refusal asks about it (`Route.unsure`)."""
        return not self.routed(threshold) and self.nearness >= UNSURE_FLOOR

    @property
    def inside(self) -> bool:
        return bool(self.expected)

    @property
    def right_topic(self) -> bool:
        return self.topic in self.expected


@dataclass(frozen=True)
class RouterFigures:
    threshold: float
    in_library: int
    out_of_library: int
    routed: int  # questions at or above the threshold
    routed_right: int  # ... whose topic is the expected one
    out_of_library_routed: int  # ... that the library has no page for
    best_topic_right: int  # in-library questions whose best topic is right, whatever the threshold
    precision: float  # routed_right / routed
    recall: float  # routed_right / in_library
    refused_out_of_library: float  # share of out-of-library questions refused
    # Refused as unsure (`Route.unsure`): in-library questions whose topic is offered first, and out-of-library
    # questions (asked about the nearest topic, not answered with it).
    unsure_first_right: int = 0
    unsure_out_of_library: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def load_question_set(path: Path = QUESTION_SET) -> list[LabelledQuestion]:
    """The labelled questions of a set file (`ValueError` naming the file when it is malformed)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        out = [LabelledQuestion(q["lang"], q["question"], q["topic"], q["split"], tuple(q.get("also", ())),
                                q.get("pair", ""), q.get("half", ""), q.get("kind", ""), q.get("near", ""))
               for q in data["questions"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a question set ({exc})") from exc
    wrong = [q.question for q in out if q.split not in SPLITS or not isinstance(q.topic, str) or not q.topic]
    if wrong:
        raise ValueError(f"{path}: questions without a topic key or a split of {SPLITS}: {wrong[:3]}")
    unpaired = [q.question for q in out if q.split == "near-miss" and not (
        q.pair and q.half in HALVES and q.kind in KINDS and (q.near or q.kind != "neighbour"))]
    if unpaired:
        raise ValueError(f"{path}: near-miss questions without a pair, a half of {HALVES}, a kind of {KINDS} "
                         f"or a neighbour's `near`: {unpaired[:3]}")
    return out


def verdicts(index: LibraryIndex, questions: list[LabelledQuestion]) -> list[Verdict]:
    """Each question's best topic and score."""
    out = []
    for q in questions:
        ranked = index.scores(q.question)
        best = ranked[0]
        near = by_nearness(ranked)
        expected = frozenset(t for t in (q.topic, *q.also) if t in index.topics)
        offered = tuple(s.topic for s in near[:NEAREST] if s.nearness > NEAREST_FLOOR)
        out.append(Verdict(q, best.topic, best.score, expected, near[0].topic, near[0].nearness, offered))
    return out


def half(results: list[Verdict], split: str) -> list[Verdict]:
    return [v for v in results if v.question.split == split]


def whole(results: list[Verdict]) -> list[Verdict]:
    """The results of the splits measured together: all but those reported apart (APART)."""
    return [v for v in results if v.question.split not in APART]


def figures(results: list[Verdict], threshold: float = DEFAULT_THRESHOLD) -> RouterFigures:
    inside = [v for v in results if v.inside]
    outside = [v for v in results if not v.inside]
    routed = [v for v in results if v.routed(threshold)]
    right = sum(v.right_topic for v in routed)
    out_routed = sum(1 for v in outside if v.routed(threshold))
    return RouterFigures(
        threshold=threshold,
        in_library=len(inside),
        out_of_library=len(outside),
        routed=len(routed),
        routed_right=right,
        out_of_library_routed=out_routed,
        best_topic_right=sum(v.right_topic for v in inside),
        precision=round(right / len(routed), 3) if routed else 1.0,
        recall=round(right / len(inside), 3) if inside else 1.0,
        refused_out_of_library=round(1 - out_routed / len(outside), 3) if outside else 1.0,
        unsure_first_right=sum(1 for v in inside if v.unsure(threshold) and v.nearest in v.expected),
        unsure_out_of_library=sum(1 for v in outside if v.unsure(threshold)),
    )


def calibrate(results: list[Verdict], *, step: float = 0.01) -> float:
    """The lowest threshold, on a grid of `step`, that routes none of the out-of-library questions."""
    highest_outside = max((v.score for v in results if not v.inside), default=0.0)
    steps = int(highest_outside / step) + 1
    return round(steps * step, 4)


def sweep(results: list[Verdict], thresholds: list[float]) -> list[RouterFigures]:
    return [figures(results, t) for t in thresholds]

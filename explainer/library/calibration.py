"""The router measured on a labelled question set: precision, recall, refusals, and the threshold.

A question set is JSON: `{"questions": [{"lang", "question", "expected": slug | null}, ...]}`,
`expected` naming a page on the question's topic (any language version) or null for a topic the
library lacks.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from explainer.library.index import LibraryIndex
from explainer.library.router import DEFAULT_THRESHOLD

QUESTION_SET = Path(__file__).resolve().parents[2] / "tests" / "data" / "router_questions.json"


@dataclass(frozen=True)
class LabelledQuestion:
    lang: str
    question: str
    expected: str | None  # a page slug, or None: the library has no page on it


@dataclass(frozen=True)
class Verdict:
    question: LabelledQuestion
    topic: str  # the best-scoring topic
    score: float
    expected_topic: str | None

    def routed(self, threshold: float) -> bool:
        return self.score >= threshold

    @property
    def right_topic(self) -> bool:
        return self.topic == self.expected_topic


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

    def as_dict(self) -> dict:
        return asdict(self)


def load_question_set(path: Path = QUESTION_SET) -> list[LabelledQuestion]:
    """The labelled questions of a set file (`ValueError` naming the file when it is malformed)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return [LabelledQuestion(q["lang"], q["question"], q["expected"]) for q in data["questions"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a question set ({exc})") from exc


def verdicts(index: LibraryIndex, questions: list[LabelledQuestion]) -> list[Verdict]:
    """Each question's best topic and score (`KeyError` for an expected slug the library lacks)."""
    out = []
    for q in questions:
        best = index.scores(q.question)[0]
        expected = index.by_slug[q.expected].topic if q.expected else None
        out.append(Verdict(q, best.topic, best.score, expected))
    return out


def figures(results: list[Verdict], threshold: float = DEFAULT_THRESHOLD) -> RouterFigures:
    inside = [v for v in results if v.expected_topic]
    outside = [v for v in results if not v.expected_topic]
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
    )


def calibrate(results: list[Verdict], *, step: float = 0.01) -> float:
    """The lowest threshold, on a grid of `step`, that routes none of the out-of-library questions."""
    highest_outside = max((v.score for v in results if not v.expected_topic), default=0.0)
    steps = int(highest_outside / step) + 1
    return round(steps * step, 4)


def sweep(results: list[Verdict], thresholds: list[float]) -> list[RouterFigures]:
    return [figures(results, t) for t in thresholds]

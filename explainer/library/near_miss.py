"""The question set's near-miss split: its pairs, and the router's figures on it by kind and half.

A near-miss pair is a question (`half` "first") and a paraphrase of it in other words (`half` "second"),
the one asked later by someone else: learning from what happens to the firsts (learners' picks, a teacher's
corrections) is measured on the seconds. A "neighbour" is about a subject next to the library topic `near`
that no page answers; a "far-words" question is on a library topic in words far from its lesson's.
"""

from __future__ import annotations

from explainer.library.calibration import HALVES, KINDS, LabelledQuestion, Verdict


def near_miss_pairs(labelled: list[LabelledQuestion]) -> dict[str, list[tuple[LabelledQuestion, LabelledQuestion]]]:
    """Each kind's (first, second) pairs, in the set's order (`ValueError` naming a pair that is not whole)."""
    by_pair: dict[str, dict[str, LabelledQuestion]] = {}
    for q in labelled:
        if q.split == "near-miss":
            by_pair.setdefault(q.pair, {})[q.half] = q
    out: dict[str, list[tuple[LabelledQuestion, LabelledQuestion]]] = {kind: [] for kind in KINDS}
    for pair, halves in by_pair.items():
        first, second = halves.get("first"), halves.get("second")
        if first is None or second is None or (first.kind, first.topic) != (second.kind, second.topic):
            raise ValueError(f"near-miss pair {pair}: not one first and one second of the same kind and topic")
        out[first.kind].append((first, second))
    return out


def near_miss_figures(results: list[Verdict], threshold: float) -> dict:
    """What the router did with the near-miss questions, by kind, and by kind within each half."""
    misses = [v for v in results if v.question.split == "near-miss"]
    return {
        **_by_kind(misses, threshold),
        "by_half": {h: _by_kind([v for v in misses if v.question.half == h], threshold) for h in HALVES},
    }


def outcome(v: Verdict, threshold: float) -> str:
    """One near-miss question's fate: "routed_right", "routed_to_near", "routed_elsewhere" (a page on another
    topic), "unsure_first" (refused, asked about its topic first), "unsure_offered" (... among the nearest
    offered, not first), or "refused" (no page, its topic not offered, or no topic for it)."""
    if v.routed(threshold):
        if v.right_topic:
            return "routed_right"
        return "routed_to_near" if not v.inside and v.topic == v.question.near else "routed_elsewhere"
    if v.inside and v.unsure(threshold) and v.nearest in v.expected:
        return "unsure_first"
    if v.inside and v.unsure(threshold) and v.expected & set(v.offered):
        return "unsure_offered"
    return "refused"


def _by_kind(results: list[Verdict], threshold: float) -> dict:
    neighbours = [v for v in results if v.question.kind == "neighbour"]
    out_of_library = [v for v in neighbours if not v.inside]
    answered = [v for v in neighbours if v.inside]  # neighbours a page turned out to answer
    far = [v for v in results if v.question.kind == "far-words"]

    def count(rows: list[Verdict], *outcomes: str) -> int:
        return sum(outcome(v, threshold) in outcomes for v in rows)

    return {
        "neighbour": {
            "questions": len(neighbours),
            "out_of_library": len(out_of_library),
            "refused": count(out_of_library, "refused"),
            "refused_unsure": sum(v.unsure(threshold) for v in out_of_library),
            "routed_to_near": count(out_of_library, "routed_to_near"),
            "routed_elsewhere": count(out_of_library, "routed_elsewhere"),
            "in_library": len(answered),
            "in_library_routed_right": count(answered, "routed_right"),
        },
        "far-words": {
            "questions": len(far),
            "routed_right": count(far, "routed_right"),
            "unsure_first": count(far, "unsure_first"),
            "unsure_offered": count(far, "unsure_first", "unsure_offered"),
            "wrong": count(far, "routed_elsewhere"),
            "refused": count(far, "refused"),
        },
    }

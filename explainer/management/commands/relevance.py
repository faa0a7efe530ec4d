"""`manage.py relevance [--json] [--recipes] [--generate]`: the router on a labelled question set, and optionally the pages.

Router figures: precision, recall and refusals at the threshold, on the whole set and on each of its
fixed halves, and the threshold calibrated on the calibration half (docs/benchmarks.md). The near-miss split
is reported apart, by kind and by half (`explainer.library.near_miss`), and is in no whole-set figure; the
JSON names the commit it was measured at. `--recipes`
adds the same figures for every index recipe (`explainer.library.index.RECIPES`), each at the threshold
calibrated on the calibration half with that recipe. With
`--generate`, each question the router answers goes through the configured backend (`PageRequest`
with the routed `topic`) and the page is checked: its `<title>` is the routed page's title, its
`<html lang>` is the promised language; out-of-library questions count as refused, or as answered
with a page on another topic.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from explainer.library.calibration import (
    APART,
    KINDS,
    QUESTION_SET,
    SPLITS,
    calibrate,
    figures,
    half,
    load_question_set,
    sweep,
    verdicts,
    whole,
)
from explainer.library.index import RECIPES, LibraryIndex
from explainer.library.near_miss import near_miss_figures, near_miss_pairs, outcome
from explainer.library.replay import index_with, replay_learned
from explainer.library.router import DEFAULT_THRESHOLD, answer_plan, route_question
from explainer.selectors.library import library_pages, shipped_index

_TITLE = re.compile(r"<title>(.*?)</title>", re.S | re.I)
_LANG = re.compile(r"<html[^>]*\blang=[\"']?([A-Za-z-]+)", re.I)




class Command(BaseCommand):
    help = "Router precision and recall on a labelled question set; --generate also checks the pages written."

    def add_arguments(self, parser):
        parser.add_argument("--questions", type=Path, default=QUESTION_SET, help="a labelled question set (JSON)")
        parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--generate", action="store_true", help="write each routed page with the backend")
        parser.add_argument("--limit", type=int, default=0, help="with --generate: at most this many questions")
        parser.add_argument("--recipes", action="store_true", help="compare the index recipes")
        parser.add_argument("--replay", action="store_true",
                            help="replay learning on the near-miss pairs' first halves and measure the set again")

    def handle(self, *args, questions, threshold, json: bool, generate, limit, recipes, replay, **options):
        # The library as shipped, with nothing learned: the figures are the router's, whatever this database
        # holds (`--replay` adds what the near-miss pairs teach it).
        index = shipped_index()
        try:
            labelled = load_question_set(questions)
            results = verdicts(index, labelled)
        except (ValueError, KeyError) as exc:
            raise CommandError(f"{questions}: {exc}") from None
        measured = whole(results)
        report = {
            "questions": str(questions),
            "commit": _commit(),
            "router": figures(measured, threshold).as_dict(),
            "halves": {split: figures(half(results, split), threshold).as_dict() for split in SPLITS},
            "calibrated_threshold": calibrate(half(results, "calibration")),
            "sweep": [f.as_dict() for f in sweep(measured, [0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7])],
            "misses": [
                {"question": v.question.question, "split": v.question.split, "expected": sorted(v.expected) or None,
                 "best": v.topic, "score": v.score, "unsure": v.unsure(threshold), "nearest": v.nearest}
                for v in measured if (v.inside and not (v.right_topic and v.routed(threshold)))
                or (not v.inside and v.routed(threshold))
            ],
            "near_miss": {
                **near_miss_figures(results, threshold),
                "questions": [
                    {"pair": v.question.pair, "half": v.question.half, "kind": v.question.kind,
                     "question": v.question.question, "expected": sorted(v.expected) or None,
                     "near": v.question.near or None, "best": v.topic, "score": v.score,
                     "offered": list(v.offered), "outcome": outcome(v, threshold)}
                    for v in half(results, "near-miss")
                ],
            },
        }
        if recipes:
            report["recipes"] = _recipes(labelled)
        if replay:
            report["replay"] = _replay(index, labelled, results, threshold)
        if generate:
            measured_questions = [q for q in labelled if q.split not in APART]
            report["generation"] = self._generate(
                measured_questions[:limit] if limit else measured_questions, threshold)
        if json:
            self.stdout.write(_dumps(report))
            return
        r = report["router"]
        self.stdout.write(
            f"router at threshold {r['threshold']}: precision {r['precision']:.3f}, recall {r['recall']:.3f} "
            f"({r['routed_right']} of {r['in_library']} in-library questions on the right topic; best topic right "
            f"for {r['best_topic_right']}); out-of-library refused {r['refused_out_of_library']:.3f} "
            f"({r['out_of_library'] - r['out_of_library_routed']} of {r['out_of_library']}); "
            f"calibrated threshold {report['calibrated_threshold']} (on the calibration half)"
        )
        for split, h in report["halves"].items():
            self.stdout.write(
                f"  {split}: precision {h['precision']:.3f}, recall {h['recall']:.3f} ({h['routed_right']} of "
                f"{h['in_library']}); out-of-library routed {h['out_of_library_routed']} of {h['out_of_library']}; "
                f"refused as unsure: {h['unsure_first_right']} in-library with their topic offered first, "
                f"{h['unsure_out_of_library']} out-of-library"
            )
        for h in ("", "first", "second"):
            n = report["near_miss"]["by_half"][h] if h else report["near_miss"]
            nb, fw = n["neighbour"], n["far-words"]
            self.stdout.write(
                f"  near-miss{' ' + h + ' halves' if h else ''}: neighbours refused {nb['refused']} of "
                f"{nb['out_of_library']} ({nb['refused_unsure']} as unsure), routed to their near topic "
                f"{nb['routed_to_near']}, elsewhere {nb['routed_elsewhere']}; far-words routed right "
                f"{fw['routed_right']} of {fw['questions']}, offered when refused {fw['unsure_offered']} "
                f"({fw['unsure_first']} first), wrong {fw['wrong']}, refused {fw['refused']}"
            )
        for row in report.get("recipes", []):
            c, h = row["calibration"], row["held-out"]
            self.stdout.write(
                f"recipe {row['recipe']:14s} threshold {row['threshold']:.2f}: best topic right {row['best_topic_right']}"
                f"/{row['in_library']}; calibration recall {c['recall']:.3f} precision {c['precision']:.3f}; held-out "
                f"recall {h['recall']:.3f} precision {h['precision']:.3f}, out-of-library routed "
                f"{h['out_of_library_routed']}/{h['out_of_library']}"
            )
        if replay:
            self._write_replay(report["replay"])
        if generate:
            self.stdout.write(_dumps(report["generation"]))

    def _write_replay(self, replay: dict) -> None:
        acts = replay["taught"]
        self.stdout.write(
            f"replay: taught from the first halves: {acts['picked']} learners' picks, {acts['pointed']} requested "
            f"topics answered with a page, {acts['wrong_page']} wrong pages; nothing to learn from {acts['nothing']}"
        )
        for h in ("first", "second"):
            before, after = replay["before"]["by_half"][h], replay["after"]["by_half"][h]
            self.stdout.write(
                f"  {h} halves: far-words routed right {before['far-words']['routed_right']} -> "
                f"{after['far-words']['routed_right']} of {after['far-words']['questions']}; neighbours given a page "
                f"{_given(before)} -> {_given(after)} of {after['neighbour']['out_of_library']}"
            )
        for split, f in replay["splits_after"].items():
            b = replay["splits_before"][split]
            self.stdout.write(f"  {split}: precision {b['precision']:.3f} -> {f['precision']:.3f}, "
                              f"recall {b['recall']:.3f} -> {f['recall']:.3f}")

    def _generate(self, labelled, threshold) -> dict:
        from explainer.selectors.library import library_page_html
        from model_worker.config import backend_capabilities, engine_settings, load_backend, writable_topics
        from model_worker.contract.pages import PageRequest
        from model_worker.worker.run import NullSink, run_page

        settings = engine_settings()
        backend = load_backend(settings)
        open_domain = backend_capabilities(settings).open_domain
        writable = None if open_domain else writable_topics(settings)
        index = shipped_index()
        counts = dict(in_library=0, pages=0, on_topic=0, promised_language=0, asked_language=0, failed=0,
                      out_of_library=0, refused=0, answered_other_topic=0, from_library=0,
                      model_pages=0, model_wrote_routed_page=0)
        titles = {p.title for p in index.pages}
        off_topic = []  # pages of in-library questions that are not the expected topic's page
        failures = []  # pages the backend did not write
        by_split = {split: dict(in_library=0, on_topic=0, out_of_library=0, answered_other_topic=0)
                    for split in SPLITS if split not in APART}
        started = time.monotonic()
        for q in labelled:
            route = route_question(index, q.question, q.lang, threshold=threshold)
            plan = answer_plan(route, open_domain=open_domain, writable=writable)
            expected = {t for t in (q.topic, *q.also) if t in index.topics}
            split = by_split[q.split]
            counts["in_library" if expected else "out_of_library"] += 1
            split["in_library" if expected else "out_of_library"] += 1
            if plan.refuse:
                counts["refused"] += 0 if expected else 1
                continue
            if plan.from_library:  # the backend cannot write it: the stored page answers (as in the app)
                counts["from_library"] += 1
                html = library_page_html(slug=plan.topic) or ""
            else:
                request = PageRequest(question=q.question, lang=plan.lang, topic=plan.topic)
                outcome = run_page(backend, request, NullSink())
                if outcome.status != "done":
                    counts["failed"] += 1
                    failures.append({"question": q.question, "routed": plan.topic, "code": outcome.error_code})
                    continue
                html = outcome.html
            title = (_TITLE.search(html) or [None, ""])[1].strip()
            if not plan.from_library:
                # Whatever the routing: did the model write the page it was asked for (its title)?
                counts["model_pages"] += 1
                counts["model_wrote_routed_page"] += bool(route.page) and title == (
                    index.by_slug[plan.topic].title if plan.topic in index.by_slug else None)
            lang = ((_LANG.search(html) or [None, ""])[1].lower().split("-") or [""])[0]
            if not expected:
                counts["answered_other_topic"] += title in titles
                split["answered_other_topic"] += title in titles
                continue
            counts["pages"] += 1
            on_topic = bool(route.page) and route.page.topic in expected and title == route.page.title
            counts["on_topic"] += on_topic
            split["on_topic"] += on_topic
            if not on_topic:
                off_topic.append({"question": q.question, "expected": sorted(expected), "routed": plan.topic,
                                  "title": title, "source": plan.source})
            counts["promised_language"] += lang == plan.lang
            counts["asked_language"] += lang == q.lang
        counts["seconds"] = round(time.monotonic() - started, 1)
        counts["backend"] = settings.backend
        counts["by_split"] = by_split
        counts["off_topic"], counts["failures"] = off_topic, failures
        return counts


def _recipes(labelled) -> list[dict]:
    """Every index recipe's figures, each at the threshold calibrated on the calibration half."""
    rows = []
    for name, recipe in RECIPES.items():
        results = verdicts(LibraryIndex(library_pages(), recipe), labelled)
        threshold = calibrate(half(results, "calibration"))
        measured = figures(whole(results), threshold)
        rows.append({"recipe": name, "threshold": threshold, "best_topic_right": measured.best_topic_right,
                     "in_library": measured.in_library,
                     **{split: figures(half(results, split), threshold).as_dict() for split in SPLITS}})
    return rows


def _given(figures: dict) -> int:
    """Near-miss neighbours no page answers that were given a page all the same."""
    n = figures["neighbour"]
    return n["routed_to_near"] + n["routed_elsewhere"]


def _replay(index, labelled, before, threshold) -> dict:
    """Learning replayed (`explainer.library.replay`): what the first halves teach, and the near-miss figures and
    every other split's before (`before`: the set's verdicts with nothing learned) and after."""
    pairs = near_miss_pairs(labelled)
    firsts = [first for kind in KINDS for first, _ in pairs[kind]]
    learned, taught = replay_learned(index, firsts, threshold)
    after = verdicts(index_with(index, learned), labelled)
    kept = [s for s in SPLITS if s not in APART]
    return {
        "taught": taught,
        "variants": len(learned.variants),
        "wrong": len(learned.wrong),
        "before": near_miss_figures(before, threshold),
        "after": near_miss_figures(after, threshold),
        "splits_before": {s: figures(half(before, s), threshold).as_dict() for s in kept},
        "splits_after": {s: figures(half(after, s), threshold).as_dict() for s in kept},
    }


def _commit() -> str:
    """The checkout's commit, so that figures name what they measured ("unknown" without git)."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parents[3],
                              capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def _dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)

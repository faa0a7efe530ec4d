"""`manage.py relevance [--json] [--generate]`: the router on a labelled question set, and optionally the pages.

Router figures: precision, recall and refusals at the threshold (docs/benchmarks.md). With
`--generate`, each question the router answers goes through the configured backend (`PageRequest`
with the routed `topic`) and the page is checked: its `<title>` is the routed page's title, its
`<html lang>` is the promised language; out-of-library questions count as refused, or as answered
with a page on another topic.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from explainer.library.calibration import QUESTION_SET, calibrate, figures, load_question_set, sweep, verdicts
from explainer.library.router import DEFAULT_THRESHOLD, answer_plan, route_question
from explainer.selectors.library import library_index

_TITLE = re.compile(r"<title>(.*?)</title>", re.S | re.I)
_LANG = re.compile(r"<html[^>]*\blang=[\"']?([A-Za-z-]+)", re.I)


class _Quiet:
    def on_draft(self, block, pieces):
        pass

    def on_commit(self, block, text, tokens):
        pass

    def should_stop(self):
        return False


class Command(BaseCommand):
    help = "Router precision and recall on a labelled question set; --generate also checks the pages written."

    def add_arguments(self, parser):
        parser.add_argument("--questions", type=Path, default=QUESTION_SET, help="a labelled question set (JSON)")
        parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--generate", action="store_true", help="write each routed page with the backend")
        parser.add_argument("--limit", type=int, default=0, help="with --generate: at most this many questions")

    def handle(self, *args, questions, threshold, json: bool, generate, limit, **options):
        try:
            labelled = load_question_set(questions)
            results = verdicts(library_index(), labelled)
        except (ValueError, KeyError) as exc:
            raise CommandError(f"{questions}: {exc}") from None
        report = {
            "questions": str(questions),
            "router": figures(results, threshold).as_dict(),
            "calibrated_threshold": calibrate(results),
            "sweep": [f.as_dict() for f in sweep(results, [0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.22, 0.25, 0.3])],
            "misses": [
                {"question": v.question.question, "expected": v.question.expected, "best": v.topic,
                 "score": v.score}
                for v in results if (v.expected_topic and not (v.right_topic and v.routed(threshold)))
                or (not v.expected_topic and v.routed(threshold))
            ],
        }
        if generate:
            report["generation"] = self._generate(labelled[:limit] if limit else labelled, threshold)
        if json:
            self.stdout.write(_dumps(report))
            return
        r = report["router"]
        self.stdout.write(
            f"router at threshold {r['threshold']}: precision {r['precision']:.3f}, recall {r['recall']:.3f} "
            f"({r['routed_right']} of {r['in_library']} in-library questions on the right topic; best topic right "
            f"for {r['best_topic_right']}); out-of-library refused {r['refused_out_of_library']:.3f} "
            f"({r['out_of_library'] - r['out_of_library_routed']} of {r['out_of_library']}); "
            f"calibrated threshold {report['calibrated_threshold']}"
        )
        if generate:
            self.stdout.write(_dumps(report["generation"]))

    def _generate(self, labelled, threshold) -> dict:
        from model_worker.backends.base import PageRequest
        from model_worker.config import backend_capabilities, engine_settings, load_backend
        from model_worker.worker.run import run_page

        settings = engine_settings()
        backend = load_backend(settings)
        open_domain = backend_capabilities(settings).open_domain
        index = library_index()
        counts = dict(in_library=0, pages=0, on_topic=0, promised_language=0, asked_language=0, failed=0,
                      out_of_library=0, refused=0, answered_other_topic=0)
        titles = {p.title for p in index.pages}
        started = time.monotonic()
        for q in labelled:
            route = route_question(index, q.question, q.lang, threshold=threshold)
            plan = answer_plan(route, open_domain=open_domain)
            counts["in_library" if q.expected else "out_of_library"] += 1
            if plan.refuse:
                counts["refused"] += 0 if q.expected else 1
                continue
            request = PageRequest(question=q.question, lang=plan.lang, topic=plan.topic)
            outcome = run_page(backend, request, _Quiet())
            if outcome.status != "done":
                counts["failed"] += 1
                continue
            html = outcome.html
            title = (_TITLE.search(html) or [None, ""])[1].strip()
            lang = ((_LANG.search(html) or [None, ""])[1].lower().split("-") or [""])[0]
            if not q.expected:
                counts["answered_other_topic"] += title in titles
                continue
            counts["pages"] += 1
            expected = index.by_slug[q.expected]
            counts["on_topic"] += bool(route.page) and route.page.topic == expected.topic and title == route.page.title
            counts["promised_language"] += lang == plan.lang
            counts["asked_language"] += lang == q.lang
        counts["seconds"] = round(time.monotonic() - started, 1)
        counts["backend"] = settings.backend
        return counts


def _dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)

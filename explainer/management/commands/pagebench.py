"""`manage.py pagebench [--questions FILE] [--limit N] [--library] [--json] [--report DIR]`: ask the question set
of the configured backend (or answer each with its library page), render-check and score every page."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from django.conf import settings as django_settings
from django.core.management.base import BaseCommand, CommandError

from model_worker.config import backend_capabilities, engine_settings, load_backend, writable_topics


class Command(BaseCommand):
    help = ("Ask pagebench's question set of the configured backend through the app's routing, render-check each "
            "page and score it on the checklist (docs/benchmarks.md, pagebench).")

    def add_arguments(self, parser):
        parser.add_argument("--questions", type=Path, help="a question set (default: explainer/pagebench/questions.json)")
        parser.add_argument("--limit", type=int, help="the first N questions only (a follow-up brings its first)")
        parser.add_argument("--library", action="store_true", help="answer each question with its routed library page")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the results as JSON")
        parser.add_argument("--report", type=Path, help="write index.html, results.json and the pages to this folder")
        parser.add_argument("--repairs", type=int, default=django_settings.REPAIR_ATTEMPTS or 1,
                            help="repairs a failing page gets, as the app's REPAIR_ATTEMPTS (default: it, at least 1)")

    def handle(self, *args, questions, limit, library, as_json, report, repairs, **options):
        from explainer.pagebench.report import row_dict, table, totals, write_report
        from explainer.pagebench.runner import bench_rows, load_questions

        try:
            version, asked = load_questions(questions)
        except (OSError, ValueError, TypeError) as exc:
            raise CommandError(f"the question set cannot be read: {exc}") from exc
        if limit:
            asked = _first(asked, limit)
        backend = features = writable = None
        engine = engine_settings()
        if not library:
            features = backend_capabilities(engine)
            writable = None if features.open_domain else writable_topics(engine)
            try:
                backend = load_backend(engine)
            except Exception as exc:
                raise CommandError(f"the backend could not be loaded: {exc}") from exc
        rows = list(bench_rows(asked, backend=backend, features=features, writable=writable, library_mode=library,
                               repairs=repairs, progress=lambda row: self.stderr.write(
                                   f"{row.question.id}: {row.status}"
                                   f"{f' {row.checklist.score}/9' if row.checklist else ''}")))
        meta = {"backend": "library" if library else engine.backend, "model": getattr(engine, "model_name", "") or
                str(engine.model_path), "questions": len(rows), "question_set": version, "commit": _commit()}
        result = {"meta": meta, "totals": totals(rows),
                  "rows": [row_dict(r, page_file=f"pages/{r.question.id}.html" if report and r.html else None)
                           for r in rows]}
        if report:
            path = write_report(rows, report, meta=meta)
            (report / "results.json").write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
            self.stderr.write(f"report: {path}")
        self.stdout.write(json.dumps(result, ensure_ascii=False, indent=1) if as_json else table(rows))


def _first(questions, limit: int):
    """The first `limit` questions, with the question each follow-up among them revises."""
    chosen = questions[:limit]
    ids = {q.id for q in chosen}
    needed = {q.after for q in chosen if q.after and q.after not in ids}
    return [q for q in questions if q.id in needed] + chosen


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""

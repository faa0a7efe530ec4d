"""pagebench's rows: each question of the set asked of the configured backend with the app's routing (as
`manage.py explain` does), the page render-checked and repaired as the app would, then scored; or, in the
library mode, answered by its routed library page (the ceiling of the kit)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from explainer.pagebench.checklist import Checklist, checklist
from model_worker.contract.pages import PageRequest, RepairNote

QUESTIONS = Path(__file__).with_name("questions.json")
MAX_REPAIR_ERRORS = 8


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    lang: str
    library: bool  # the library has a page on it
    after: str | None = None  # a follow-up: the id of the question whose page it revises


@dataclass
class Row:
    question: Question
    status: str  # "done" | "failed" | "refused" | "no_page"
    source: str = "model"  # "model" | "library"
    topic: str | None = None  # the library page the router chose or grounded on
    html: str = ""
    checklist: Checklist | None = None
    report: object = None  # the final page's RenderReport
    repairs: int = 0
    stats: dict = field(default_factory=dict)  # tokens, first_token_s, seconds, tokens_per_s
    error: str | None = None


def load_questions(path: Path | None = None) -> tuple[int, list[Question]]:
    """(the set's version, its questions, each follow-up after the question it revises)."""
    data = json.loads((path or QUESTIONS).read_text(encoding="utf-8"))
    questions = [Question(**q) for q in data["questions"]]
    ids = {q.id for q in questions}
    missing = [q.id for q in questions if q.after and q.after not in ids]
    if missing:
        raise ValueError(f"follow-ups after no question of the set: {missing}")
    return data.get("version", 0), questions


def bench_rows(questions: list[Question], *, backend=None, features=None, writable=None, library_mode: bool = False,
               repairs: int = 1, progress=None):
    """Yield one scored `Row` per question, in order (a follow-up revises its first question's page)."""
    from explainer.selectors.library import library_index

    index = library_index()
    pages: dict[str, str] = {}
    words = {q.id: q.question for q in questions}
    for question in questions:
        row = _row(question, previous=pages.get(question.after) if question.after else None, backend=backend,
                   features=features, writable=writable, library_mode=library_mode, repairs=repairs, index=index,
                   subject=words.get(question.after, question.question))
        if row.html:
            pages[question.id] = row.html
        if progress:
            progress(row)
        yield row


def _row(question: Question, *, previous, backend, features, writable, library_mode, repairs, index, subject) -> Row:
    from explainer.library.router import answer_plan
    from explainer.render_check import check_html
    from explainer.selectors.library import library_page_html, question_route

    if question.after and previous is None:
        return Row(question, "no_page", error="the question it follows has no page")
    route = question_route(question=question.question, lang=question.lang)
    if library_mode:
        if question.after:  # the library cannot revise: its answer is the first question's page
            html, topic = previous, None
        else:
            topic = route.page.slug if route.page else None
            html = library_page_html(slug=topic) if topic else None
        if not html:
            return Row(question, "no_page", source="library", error="the router found no library page")
        row = Row(question, "done", source="library", topic=topic, html=html)
    else:
        open_domain = features.open_domain
        plan = answer_plan(route, open_domain=open_domain, writable=None if open_domain else writable)
        if plan.refuse:
            return Row(question, "refused", topic=None, error=f"no library topic fits (score {route.score})")
        if plan.from_library:
            row = Row(question, "done", source="library", topic=plan.topic, html=library_page_html(slug=plan.topic))
        else:  # as the app, a backend that cannot revise pages writes a follow-up's page afresh
            previous = previous if features.revises_pages else None
            request = PageRequest(question=question.question, lang=plan.lang, previous_page=previous, topic=plan.topic)
            row = _written(request, backend, topic=plan.topic, question=question)
            if row.status != "done":
                return row
    report = check_html(row.html)
    while not report.passed and row.source == "model" and row.repairs < repairs and features.revises_pages:
        row.repairs += 1
        note = RepairNote(page=row.html, errors=tuple(report.repair_errors()[:MAX_REPAIR_ERRORS]), attempt=row.repairs)
        request = PageRequest(question=question.question, lang=question.lang, topic=row.topic, repair=note)
        fixed = _written(request, backend, topic=row.topic, question=question)
        _add_stats(row.stats, fixed.stats)
        if fixed.status != "done":
            break
        row.html, report = fixed.html, check_html(fixed.html)
    row.report = report
    row.checklist = checklist(html=row.html, report=report, question=subject, lang=question.lang, index=index)
    return row


def _written(request: PageRequest, backend, *, topic, question: Question) -> Row:
    from model_worker.worker.run import NullSink, run_page

    started = time.monotonic()
    outcome = run_page(backend, request, NullSink())
    stats = outcome.stats or {}
    seconds = stats.get("seconds") or round(time.monotonic() - started, 3)
    tokens = stats.get("tokens") or 0
    row_stats = {"tokens": tokens, "first_token_s": stats.get("first_block_s"), "seconds": seconds,
                 "tokens_per_s": stats.get("tokens_per_s") or (round(tokens / seconds, 1) if seconds else None)}
    if outcome.status != "done":
        return Row(question, "failed", topic=topic, stats=row_stats,
                   error=f"{outcome.error_code}: {outcome.error_message}")
    return Row(question, "done", topic=topic, html=outcome.html, stats=row_stats)


def _add_stats(total: dict, more: dict) -> None:
    """A repair's tokens and seconds count toward its page; its speed does not replace the first try's."""
    for key in ("tokens", "seconds"):
        total[key] = round((total.get(key) or 0) + (more.get(key) or 0), 3)

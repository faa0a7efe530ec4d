"""pagebench's checklist: what one page does for its question, from its html and its render report."""

from __future__ import annotations

import re
from dataclasses import dataclass

from explainer.library.kit_calls import kit_calls, page_lang
from explainer.library.records import LibraryPage
from explainer.library.router import DEFAULT_THRESHOLD
from explainer.render_check.report import RenderReport

ITEMS = {  # name -> what the report's column says
    "renders": "renders without errors",
    "scene": "scene drawn",
    "part_opens": "a part that opens",
    "control_changes": "a control that changes the scene",
    "steps": "at least 4 steps",
    "quiz": "a quiz that answers",
    "language": "page language = asked language",
    "on_question": "title and intro on the question",
    "accessible": "accessible (axe-core)",
}
MIN_STEPS = 4
PAGE_KEY = "pagebench:page"
_TITLE = re.compile(r"<title>(.*?)</title>", re.S | re.I)
_START_TEXT = r"""\bstart\s*\(\s*\{{[^}}]*?\b{name}\s*:\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`([^`]*)`)"""


@dataclass(frozen=True)
class Checklist:
    items: dict[str, bool]
    title: str
    intro: str
    steps: int
    on_question_score: float | None

    @property
    def score(self) -> int:
        return sum(self.items.values())

    def as_dict(self) -> dict:
        return {"items": self.items, "score": self.score, "of": len(self.items), "title": self.title,
                "intro": self.intro, "steps": self.steps, "on_question_score": self.on_question_score}


def start_text(html: str, name: str) -> str:
    """A string option of the page's `start({...})` (title, intro); "" when it is no plain literal."""
    found = re.search(_START_TEXT.format(name=name), html)
    return next((g for g in found.groups() if g is not None), "") if found else ""


def page_title(html: str) -> str:
    found = _TITLE.search(html)
    return start_text(html, "title") or (found.group(1).strip() if found else "")


def on_question_score(*, question: str, lang: str, title: str, intro: str, index) -> float:
    """The router's score of the page's title and intro for the question, scored beside the library's pages
    (`index`): its nearness, the score before the outside set's share, since a title and an intro are a short
    record that the outside set's sentences would outweigh."""
    record = LibraryPage(slug=PAGE_KEY, topic=PAGE_KEY, title=title, lang=lang, intro=intro, body=intro)
    scores = index.with_pages([record]).scores(question)
    return next(s.nearness for s in scores if s.topic == PAGE_KEY)


def checklist(*, html: str, report: RenderReport, question: str, lang: str, index) -> Checklist:
    """Score one page; `question`: what it must be on (a follow-up's page: the thread's first question);
    `index`: the router's library index, for the on-question item."""
    checks = report.checks
    passed = lambda name: bool(checks.get(name) and checks[name].passed)  # noqa: E731
    interaction = report.metrics.get("interaction") or {}
    calls = kit_calls(html)
    title, intro = page_title(html), start_text(html, "intro")
    score = on_question_score(question=question, lang=lang, title=title, intro=intro, index=index) if title else None
    items = {
        "renders": passed("ready") and passed("errors"),
        "scene": passed("canvas"),
        "part_opens": bool((interaction.get("click") or {}).get("part_opened")),
        "control_changes": bool((interaction.get("slider") or {}).get("canvas_changed")),
        "steps": len(calls.steps) >= MIN_STEPS,
        "quiz": passed("quiz"),
        "language": page_lang(html) == lang,
        "on_question": score is not None and score >= DEFAULT_THRESHOLD,
        "accessible": passed("accessible"),
    }
    return Checklist(items=items, title=title, intro=intro, steps=len(calls.steps), on_question_score=score)

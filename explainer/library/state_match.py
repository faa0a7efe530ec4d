"""A follow-up matched against the page it is asked on: the state of that page that answers it, or None.

The page's own kit calls (`explainer.library.kit_calls`) are the candidates: each part (its title and text),
each step (its title and text) and each control (its label) is one record of a `LibraryIndex`, the
router's scorer (BM25 with coverage, and the sentence encoder), over that page alone. A follow-up that asks
a control to move (`explainer.library.directions`) and names one moves it a quarter of its range that
way, or starts or stops it; otherwise one that names a part opens it, and one that names what a step is
about shows that step. A best score under the threshold (or too close to the runner-up of another kind)
is no match: the follow-up is not forced onto the page. Thresholds: docs/benchmarks.md, Follow-ups on the
page, measured on tests/data/follow_up_states.json.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass

from explainer.library.directions import DOWN, START, STOP, UP, direction_of
from explainer.library.index import RECIPES, EmptyLibrary, LibraryIndex, TopicScore
from explainer.library.kit_calls import KitCalls, KitControl, kit_calls
from explainer.library.page_state import PageState, number_text
from explainer.library.records import LibraryPage

# The router's recipe less its outside set, whose questions are about topics, not about one page's parts.
RECIPE = RECIPES["best-field+coverage+semantic"]
# The score a part or a step needs, and a control named with a direction (docs/benchmarks.md).
THRESHOLD = 0.3
CONTROL_THRESHOLD = 0.2
# A direction moves a slider this share of its range (snapped to its step); the timeline and toggles switch.
NUDGE = 0.25
PAGES_KEPT = 64  # pages whose index is kept, the last followed up first

PART, STEP, CONTROL = "part", "step", "control"


@dataclass(frozen=True)
class StateMatch:
    state: PageState
    target: str  # what answered: "part:<title>", "step:<number>" or "control:<label>"
    score: float


@dataclass(frozen=True)
class _Page:
    calls: KitCalls
    index: LibraryIndex | None


# What a timeline is called besides its label: a learner asks to stop "the animation".
_TIMELINE_WORDS = {"en": "animation timeline", "zh": "动画 时间轴"}


def _record(key: str, title: str, text: str, lang: str) -> LibraryPage:
    """One candidate: its title is the record's head (what the sentence encoder compares, too), its text the
    body, which counts half: a follow-up that names a part by its title is about that part, not about a step
    whose text mentions it."""
    return LibraryPage(slug=key, topic=key, title=title, lang=lang, body=text)


@functools.lru_cache(maxsize=PAGES_KEPT)
def _page(html: str, kept: bool) -> _Page:
    """A page's kit calls and the index over them. A library page's texts are kept by the process's encoder,
    as the router's are (a bounded set, encoded once); a written page's are not (they would pile up there for
    good), so it is encoded again once its index leaves this cache."""
    from explainer.library.semantic import UnkeptEncoder

    calls = kit_calls(html)
    records = [_record(f"{PART}:{p.title}", p.title, p.text, calls.lang) for p in calls.parts]
    records += [_record(f"{STEP}:{s.number}", s.title, s.text, calls.lang) for s in calls.steps]
    records += [_record(f"{CONTROL}:{c.label}", c.label, _TIMELINE_WORDS[calls.lang] if c.kind == "timeline" else "",
                        calls.lang) for c in calls.controls]
    try:
        return _Page(calls, LibraryIndex(records, RECIPE, encoder=None if kept else UnkeptEncoder()))
    except EmptyLibrary:
        return _Page(calls, None)


def _start(control: KitControl, current: PageState, calls: KitCalls) -> float:
    """Where the control is in the state: set by the state, else by the state's step, else as the page starts it."""
    try:
        return float(current.control(control.label))
    except (TypeError, ValueError):
        pass
    step = next((s for s in calls.steps if s.number == current.step), None)
    return dict(step.sets).get(control.label, control.value) if step else control.value


def _moved(control: KitControl, way: str, current: PageState, calls: KitCalls) -> str | None:
    """The control's value after moving it `way` from where the learner sees it; None when that direction means
    nothing to it."""
    if control.kind == "timeline":
        return {START: "play", STOP: "pause"}.get(way)
    if control.kind == "toggle":
        return {START: "on", STOP: "off"}.get(way)
    if way not in (UP, DOWN):
        return None
    value = _start(control, current, calls)
    span = control.high - control.low
    value += NUDGE * span * (1 if way == UP else -1)
    if control.step:
        value = control.low + math.floor((value - control.low) / control.step + 0.5) * control.step
    return number_text(min(max(value, control.low), control.high))


def _best(scores: list[TopicScore], kinds: tuple[str, ...]) -> TopicScore | None:
    return next((s for s in scores if s.topic.split(":", 1)[0] in kinds), None)


def _names(question: str, title: str) -> bool:
    """Whether the follow-up names the title word for word (a Latin title as whole words)."""
    question, title = unicodedata.normalize("NFKC", question).lower(), unicodedata.normalize("NFKC", title).lower().strip()
    if not title:
        return False
    # Chinese runs have no spaces: a Han title is named wherever it occurs.
    before = r"(?<![a-z0-9])" if title[0].isascii() else ""
    after = r"(?![a-z0-9])" if title[-1].isascii() else ""
    return re.search(before + re.escape(title) + after, question) is not None


def _part_or_step(question: str, scores: list[TopicScore], index: LibraryIndex) -> TopicScore | None:
    """The part or step the follow-up is about: of those over the threshold, one it names word for word (the
    longest such title), else the best."""
    passing = [s for s in scores if s.topic.split(":", 1)[0] in (PART, STEP) and s.score >= THRESHOLD]
    named = [s for s in passing if _names(question, index.by_slug[s.topic].title)]
    if named:
        return max(named, key=lambda s: len(index.by_slug[s.topic].title))
    return passing[0] if passing else None


def state_match(*, question: str, html: str, current: PageState | None = None, lang: str | None = None,
                library: bool = False) -> StateMatch | None:
    """The state of the page (`html`, now shown in `current`) that answers the follow-up, or None. With `lang`
    (the follow-up's language) a page in the other language answers nothing: the learner asked for their own.
    `library`: the page is one of the library's, whose texts the encoder keeps."""
    current = current or PageState()
    page = _page(html, library)
    if page.index is None or lang not in (None, page.calls.lang):
        return None
    way, rest = direction_of(question)
    scores = page.index.scores(rest or question)
    if way is not None:
        found = _best(scores, (CONTROL,))
        if found is not None and found.score >= CONTROL_THRESHOLD:
            label = found.topic.split(":", 1)[1]
            control = next(c for c in page.calls.controls if c.label == label)
            value = _moved(control, way, current, page.calls)
            if value is not None:
                return StateMatch(current.with_control(label, value), found.topic, found.score)
    found = _part_or_step(question, scores, page.index)
    if found is None:
        return None
    kind, name = found.topic.split(":", 1)
    if kind == STEP:  # a step sets its own scene: the controls moved before are let go
        return StateMatch(PageState(step=int(name)), found.topic, found.score)
    return StateMatch(PageState(step=current.step, part=name, controls=current.controls), found.topic, found.score)

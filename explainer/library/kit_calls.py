"""The parts, steps and controls a kit page declares, read from its module script without running it.

A page's calls (`app.part(obj, {title, text})`, `app.steps([...])`, `app.slider({label, min, max, ...})`,
`app.toggle({label, value})`, `app.timeline({duration, label})`) are read as JavaScript literals: strings,
numbers, `{en, zh}` texts, objects and arrays. Anything else (a function, a variable, arithmetic) is
`UNKNOWN`, so a call whose title or range is computed at run time is left out rather than guessed.
Milliseconds per page, where the render check's Chromium takes seconds: a follow-up is matched against
these while the learner waits.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

UNKNOWN = object()  # a value that is not a literal

_MODULE = re.compile(r"<script\b[^>]*type=[\"']?module[\"']?[^>]*>(.*?)</script>", re.S | re.I)
_HTML_LANG = re.compile(r"<html\b[^>]*\blang=[\"']?([A-Za-z-]+)", re.I)
_APP = re.compile(r"\b([A-Za-z_$][\w$]*)\s*=\s*start\s*\(")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_ASSIGNED = re.compile(r"([A-Za-z_$][\w$]*)\s*=\s*$")
_SET = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)\s*\.\s*set\s*\(\s*(-?\d+(?:\.\d+)?|true|false)\s*\)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
# After one of these a `/` starts a regular expression, not a division.
_BEFORE_REGEX = set("(,=:[!&|?{};+-*%<>~^") | {""}


@dataclass(frozen=True)
class KitPart:
    title: str
    text: str


@dataclass(frozen=True)
class KitStep:
    number: int  # from 1, as the page's step counter shows it
    title: str
    text: str
    # What its `enter()` sets by literal (`silica.set(70)`), as (control label, value): where a control starts
    # when the learner is on this step.
    sets: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class KitControl:
    kind: str  # "slider" | "toggle" | "timeline"
    label: str
    low: float  # a toggle: 0 (off) to 1 (on); the timeline: 0 to its duration
    high: float
    step: float | None  # a slider's step; None for "any"
    value: float  # where the page starts it


@dataclass(frozen=True)
class KitCalls:
    lang: str  # "en" | "zh": the language the kit shows the page's texts in
    parts: tuple[KitPart, ...] = ()
    steps: tuple[KitStep, ...] = ()
    controls: tuple[KitControl, ...] = ()


class _Reader:
    """A cursor over script text that reads one JavaScript literal, or skips one expression."""

    def __init__(self, text: str, at: int = 0):
        self.text, self.at = text, at

    def peek(self) -> str:
        self.blank()
        return self.text[self.at: self.at + 1]

    def blank(self) -> None:
        text = self.text
        while self.at < len(text):
            if text[self.at].isspace():
                self.at += 1
            elif text.startswith("//", self.at):
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end
            elif text.startswith("/*", self.at):
                end = text.find("*/", self.at + 2)
                self.at = len(text) if end < 0 else end + 2
            else:
                return

    def value(self):
        """The literal at the cursor, or UNKNOWN (the expression skipped) when it is not one."""
        start = self.peek()
        begin = self.at
        if start in "\"'`":
            literal = self.string()
            if self.peek() in ",}])" or not self.peek():
                return literal
        elif start == "{":
            found = self.obj()
            if self.peek() in ",}])":
                return found
        elif start == "[":
            found = self.array()
            if self.peek() in ",}])":
                return found
        else:
            number = _NUMBER.match(self.text, self.at)
            if number:
                self.at = number.end()
                if self.peek() in ",}])":
                    return float(number.group())
            else:
                word = _WORD.match(self.text, self.at)
                if word and word.group() in ("true", "false"):
                    self.at = word.end()
                    if self.peek() in ",}])":
                        return word.group() == "true"
        self.at = begin
        self.skip()
        return UNKNOWN

    def string(self) -> str | object:
        quote = self.text[self.at]
        self.at += 1
        out, computed = [], False
        while self.at < len(self.text):
            c = self.text[self.at]
            if c == "\\":
                nxt = self.text[self.at + 1: self.at + 2]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.text[self.at + 2: self.at + 6]):
                    out.append(chr(int(self.text[self.at + 2: self.at + 6], 16)))
                    self.at += 6
                    continue
                out.append(_ESCAPES.get(nxt, nxt))
                self.at += 2
                continue
            if c == quote:
                self.at += 1
                return UNKNOWN if computed else "".join(out)
            if quote == "`" and self.text.startswith("${", self.at):
                computed = True
                self.at += 2
                self.skip(closer="}")
                self.at += 1
                continue
            if c == "\n" and quote != "`":
                break
            out.append(c)
            self.at += 1
        return UNKNOWN

    def obj(self) -> dict:
        self.at += 1
        found: dict = {}
        while self.peek() not in ("}", ""):
            key = self.key()
            if key is None:
                self.skip()
            elif self.peek() == ":":
                self.at += 1
                found[key] = self.value()
            elif self.peek() == "(":  # a method: `enter() { ... }`
                self.skip()
                found[key] = UNKNOWN
            else:  # shorthand `{ value }`
                found[key] = UNKNOWN
            if self.peek() == ",":
                self.at += 1
            elif self.peek() != "}":
                self.skip()
                if self.peek() == ",":
                    self.at += 1
        self.at += 1
        return found

    def key(self) -> str | None:
        start = self.peek()
        if start in "\"'":
            key = self.string()
            return key if isinstance(key, str) else None
        word = _WORD.match(self.text, self.at)
        if word:
            self.at = word.end()
            return word.group()
        return None

    def array(self) -> list:
        self.at += 1
        found = []
        while self.peek() not in ("]", ""):
            found.append(self.value())
            if self.peek() == ",":
                self.at += 1
        self.at += 1
        return found

    def skip(self, closer: str = ",})]") -> None:
        """Past one expression: to the next of `closer` outside brackets, strings, comments and regexps."""
        depth, text, before = 0, self.text, ""
        while self.at < len(text):
            self.blank()
            if self.at >= len(text):
                return
            c = text[self.at]
            if depth == 0 and c in closer:
                return
            if c in "\"'`":
                self.string()
            elif c == "/" and before in _BEFORE_REGEX:
                self.regex()
            else:
                if c in "([{":
                    depth += 1
                elif c in ")]}":
                    depth -= 1
                    if depth < 0:
                        return
                self.at += 1
            before = c if c != "/" else ")"

    def regex(self) -> None:
        self.at += 1
        in_class = False
        while self.at < len(self.text) and self.text[self.at] != "\n":
            c = self.text[self.at]
            self.at += 2 if c == "\\" else 1
            if c == "[":
                in_class = True
            elif c == "]":
                in_class = False
            elif c == "/" and not in_class:
                break
        word = _WORD.match(self.text, self.at)
        if word:
            self.at = word.end()


def _text(value, lang: str) -> str | None:
    """A kit text (T: a string or `{en, zh}`) as the kit shows it in `lang`; None when it is not a literal."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in (lang, "en", "zh"):
            if isinstance(value.get(key), str):
                return value[key]
    return None


def _number(value, default: float | None) -> float | None:
    if value is UNKNOWN:
        return None
    if value is None:
        return default
    return value if isinstance(value, float) and math.isfinite(value) else None


def _call_args(script: str, app: str, method: str):
    """A reader at the first argument of each `app.method(` call."""
    for _, reader in _assigned_calls(script, app, method):
        yield reader


def _assigned_calls(script: str, app: str, method: str):
    """Each `app.method(` call, as (the variable it is assigned to, or None; a reader at its first argument)."""
    for match in re.finditer(rf"(?<![\w$.]){re.escape(app)}\s*\.\s*{method}\s*\(", script):
        assigned = _ASSIGNED.search(script, max(0, match.start() - 80), match.start())
        yield (assigned.group(1) if assigned else None), _Reader(script, match.end())


def _options(reader: _Reader, *, after_first: bool = False) -> dict:
    """The options object of a call (its second argument when `after_first`), or {}."""
    if after_first:
        reader.skip()
        if reader.peek() != ",":
            return {}
        reader.at += 1
    if reader.peek() != "{":
        return {}
    found = reader.value()
    return found if isinstance(found, dict) else {}


def _parts(script: str, app: str, lang: str) -> list[KitPart]:
    parts = []
    for reader in _call_args(script, app, "part"):
        options = _options(reader, after_first=True)
        title, text = _text(options.get("title"), lang), _text(options.get("text"), lang)
        if title and title not in {p.title for p in parts}:
            parts.append(KitPart(title=title, text=text or ""))
    return parts


def _steps(script: str, app: str, lang: str, controls: dict[str, str]) -> list[KitStep]:
    """The narration's steps; `controls` (a control's variable: its label) reads what each step's `enter` sets."""
    for reader in _call_args(script, app, "steps"):
        if reader.peek() != "[":
            return []
        reader.at += 1
        listed = []  # (the step's literal, its source)
        while reader.peek() not in ("]", ""):
            begin = reader.at
            listed.append((reader.value(), script[begin:reader.at]))
            if reader.peek() == ",":
                reader.at += 1
        if not all(isinstance(s, dict) for s, _ in listed):
            return []
        steps = [KitStep(number=i, title=_text(s.get("title"), lang) or "", text=_text(s.get("text"), lang) or "",
                         sets=_sets(source, controls))
                 for i, (s, source) in enumerate(listed, start=1)]
        return [s for s in steps if s.title or s.text]
    return []


def _sets(source: str, controls: dict[str, str]) -> tuple[tuple[str, float], ...]:
    """The controls a step's source sets by literal, by label (`silica.set(70)`, `valve.set(true)`)."""
    found: dict[str, float] = {}
    for name, value in _SET.findall(source):
        if name in controls:
            found[controls[name]] = 1.0 if value == "true" else 0.0 if value == "false" else float(value)
    return tuple(found.items())


def _controls(script: str, app: str, lang: str) -> tuple[list[KitControl], dict[str, str]]:
    """The page's controls, and the variable each slider or toggle is assigned to: its label."""
    default_label = {"en": "Timeline", "zh": "时间轴"}[lang]  # the kit's own word (static/kit/text.js)
    controls, names = [], {}
    for reader in _call_args(script, app, "timeline"):
        options = _options(reader)
        label = _text(options.get("label"), lang) if "label" in options else default_label
        duration = _number(options.get("duration"), 10.0)
        if label and duration and duration > 0:
            controls.append(KitControl("timeline", label, 0.0, duration, None, 0.0))
    for name, reader in _assigned_calls(script, app, "slider"):
        options = _options(reader)
        label = _text(options.get("label"), lang)
        low, high = _number(options.get("min"), 0.0), _number(options.get("max"), 1.0)
        step = _number(options.get("step"), 0.01)
        if label and low is not None and high is not None and high > low:
            value = _number(options.get("value"), low)
            controls.append(KitControl("slider", label, low, high, step, low if value is None else value))
            names[name] = label
    for name, reader in _assigned_calls(script, app, "toggle"):
        options = _options(reader)
        label = _text(options.get("label"), lang)
        if label:
            on = options.get("value") is True
            controls.append(KitControl("toggle", label, 0.0, 1.0, 1.0, 1.0 if on else 0.0))
            names[name] = label
    seen: set[str] = set()
    # Two controls with one label cannot be told apart in a page link: neither is named.
    twice = {c.label for c in controls if c.label in seen or seen.add(c.label)}
    return [c for c in controls if c.label not in twice], {n: label for n, label in names.items()
                                                           if n and label not in twice}


def page_lang(html: str, script: str = "") -> str:
    """The language the kit shows the page in: `start({lang})`, else `<html lang>` (static/kit/text.js)."""
    declared = re.search(r"\bstart\s*\(\s*\{[^}]*?\blang\s*:\s*[\"'](\w+)", script)
    found = declared.group(1) if declared else (_HTML_LANG.search(html).group(1) if _HTML_LANG.search(html) else "en")
    return "zh" if found.lower().startswith("zh") else "en"


def kit_calls(html: str) -> KitCalls:
    """What the page's module script declares; empty for a page that never calls `start()`."""
    script = "\n".join(_MODULE.findall(html))
    lang = page_lang(html, script)
    started = _APP.search(script)
    if started is None:
        return KitCalls(lang=lang)
    app = started.group(1)
    controls, names = _controls(script, app, lang)
    return KitCalls(lang=lang, parts=tuple(_parts(script, app, lang)), steps=tuple(_steps(script, app, lang, names)),
                    controls=tuple(controls))

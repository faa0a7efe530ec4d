"""One typed value per event of docs/protocol.md, each with its wire form.

An event is built here, as a value, by whoever sends it (the GPU worker, a web-tier service, the render
check, the socket) and turned into JSON only at the edge: `to_wire` gives the fields in the order the
protocol sends them, without `id` and `generation` (the stream and the socket add those), and leaves out an
optional field that is unset. `from_wire` reads any event back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

# A finished generation's stream ends with one of these.
TERMINAL_TYPES = frozenset({"qa", "error"})


@dataclass(frozen=True)
class TopicRef:
    """A library topic as the protocol names it: `{"slug", "title"}`."""

    slug: str
    title: str

    def to_wire(self) -> dict:
        return {"slug": self.slug, "title": self.title}


@dataclass(frozen=True)
class Event:
    TYPE: ClassVar[str]
    # Fields left out of the wire form while unset (None, or False for a flag).
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    def to_wire(self) -> dict:
        wire: dict[str, Any] = {"type": self.TYPE}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in self.OPTIONAL and (value is None or value is False):
                continue
            wire[f.name] = _wire_value(value)
        return wire

    @property
    def terminal(self) -> bool:
        return self.TYPE in TERMINAL_TYPES


def _wire_value(value):
    if isinstance(value, TopicRef):
        return value.to_wire()
    if isinstance(value, tuple | list):
        return [_wire_value(v) for v in value]
    return value


@dataclass(frozen=True)
class Hello(Event):
    TYPE = "hello"
    protocol: int


@dataclass(frozen=True)
class Queued(Event):
    """The generation waits with `position` ahead of it; `requeued` when it is back in the queue."""

    TYPE = "queued"
    OPTIONAL = frozenset({"requeued", "code", "message"})
    thread: str
    position: int
    requeued: bool = False
    code: str | None = None  # "worker_lost" when its worker died
    message: str | None = None


@dataclass(frozen=True)
class Retry(Event):
    TYPE = "retry"
    attempt: int
    code: str
    message: str


@dataclass(frozen=True)
class Topic(Event):
    """What the router understood: the page being written (or none), its language, score and nearest; for a
    page a model writes for the question itself, the question it `answers` and the `related` lesson it is
    grounded on."""

    TYPE = "topic"
    OPTIONAL = frozenset({"answers", "related"})
    slug: str | None
    title: str | None
    lang: str
    score: float | None
    nearest: tuple[TopicRef, ...] = ()
    source: str = "model"  # "model" | "library" | "page" (the page the learner reads, in another state)
    answers: str | None = None  # the question the page is written for (an open-domain backend)
    related: TopicRef | None = None  # the library lesson that page is grounded on


@dataclass(frozen=True)
class Draft(Event):
    TYPE = "draft"
    block: int
    pieces: list[str | None]


@dataclass(frozen=True)
class Commit(Event):
    TYPE = "commit"
    block: int
    text: str


@dataclass(frozen=True)
class Stats(Event):
    TYPE = "stats"
    blocks: int
    tokens: int
    seconds: float
    tokens_per_s: float


@dataclass(frozen=True)
class Done(Event):
    TYPE = "done"
    OPTIONAL = frozenset({"unchanged", "state"})
    thread: str
    page: int
    page_url: str
    version: int
    stats: dict = field(default_factory=dict)
    unchanged: bool = False  # a follow-up's page came out as the page it revised: no new version
    state: str | None = None  # the page answers as itself, shown in this state (page_url's fragment)


@dataclass(frozen=True)
class Fixing(Event):
    TYPE = "fixing"
    thread: str
    page: int
    version: int
    attempt: int
    attempts: int
    errors: tuple[str, ...]
    repair: str  # the repairing generation's id


@dataclass(frozen=True)
class Qa(Event):
    TYPE = "qa"
    page: int
    version: int
    repair: str | None
    check: int
    status: str
    passed: bool
    summary: str
    checks: tuple[dict, ...]  # {name, passed, detail, required}
    thumbnail_url: str | None


@dataclass(frozen=True)
class Error(Event):
    """Something could not be done; for a generation, its last event."""

    TYPE = "error"
    OPTIONAL = frozenset({"request", "nearest", "unsure"})
    code: str
    message: str
    request: str | None = None  # the client message type it answers
    nearest: tuple[TopicRef, ...] | None = None  # unknown_topic: topics to ask instead
    unsure: bool | None = None  # unknown_topic: the nearest topic may be the one

    def to_wire(self) -> dict:
        wire = super().to_wire()
        if self.unsure is False:  # unknown_topic always says whether it is unsure
            wire["unsure"] = False
        return wire


@dataclass(frozen=True)
class Watching(Event):
    TYPE = "watching"
    thread: str


@dataclass(frozen=True)
class PageHidden(Event):
    TYPE = "page_hidden"
    page: int
    thread: str
    version: int


@dataclass(frozen=True)
class PageShown(Event):
    TYPE = "page_shown"
    OPTIONAL = frozenset({"question", "check"})
    page: int
    thread: str
    version: int
    question: str | None = None
    check: str | None = None  # its latest render check's status, or ""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.TYPE: cls for cls in (Hello, Queued, Retry, Topic, Draft, Commit, Stats, Done, Fixing, Qa, Error, Watching,
                              PageHidden, PageShown)
}
# Fields the stream or the socket adds around an event, not the event's own.
EDGE_FIELDS = frozenset({"id", "generation"})


def from_wire(data: dict) -> Event:
    """The event a wire dict holds (`id` and `generation` set aside); ValueError for an unknown type or field."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ValueError("an event is a JSON object with a string type")
    cls = EVENT_TYPES.get(data["type"])
    if cls is None:
        raise ValueError(f"unknown event type {data['type']!r}")
    names = {f.name for f in fields(cls)}
    own = {k: v for k, v in data.items() if k != "type" and k not in EDGE_FIELDS}
    unknown = set(own) - names
    if unknown:
        raise ValueError(f"a {cls.TYPE} event has no field(s) {', '.join(sorted(unknown))}")
    if isinstance(own.get("nearest"), list):
        own["nearest"] = tuple(TopicRef(**ref) for ref in own["nearest"])
    if isinstance(own.get("related"), dict):
        own["related"] = TopicRef(**own["related"])
    for name in ("errors", "checks"):
        if isinstance(own.get(name), list):
            own[name] = tuple(own[name])
    try:
        return cls(**own)
    except TypeError as exc:  # a field missing
        raise ValueError(f"a {cls.TYPE} event: {exc}") from None

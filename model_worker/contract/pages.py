"""What crosses the seam between the web tier and the engine: a page request, its outcome, a repair note,
what a backend declares it can do, and a lesson put to the model for its second opinion."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Literal

LANGS = ("en", "zh")  # the languages a page is written in
OUTCOME_STATUSES = ("done", "failed", "cancelled")
MAX_REPAIR_ERRORS = 8  # error lines a repair note carries; the first ones say most
MAX_ERROR_CHARS = 300


@dataclass(frozen=True)
class RepairNote:
    """A page that failed the render check, what the check found, and which repair attempt this is."""

    page: str
    errors: tuple[str, ...]
    attempt: int = 1  # 1 for the first repair

    def __post_init__(self):
        object.__setattr__(self, "errors", tuple(str(e)[:MAX_ERROR_CHARS] for e in self.errors)[:MAX_REPAIR_ERRORS])
        if self.attempt < 1:
            raise ValueError(f"a repair attempt counts from 1, got {self.attempt}")


@dataclass(frozen=True)
class PageRequest:
    question: str
    lang: str = "en"  # one of LANGS
    previous_page: str | None = None  # follow-up: the page being revised
    topic_note: str | None = None  # a teacher's note to the model
    topic: str | None = None  # slug of the library page the router chose; the page to write
    repair: RepairNote | None = None  # set when this request repairs a page that failed the render check

    def __post_init__(self):
        """Checked where it is made, so neither tier sends or runs a request the other cannot read."""
        if not isinstance(self.question, str) or not self.question.strip():
            raise ValueError("a page request needs a question (non-empty text)")
        if self.lang not in LANGS:
            raise ValueError(f"unknown language {self.lang!r}: expected one of {', '.join(LANGS)}")
        for name in ("previous_page", "topic_note", "topic"):
            if not isinstance(getattr(self, name), str | None):
                raise ValueError(f"a page request's {name} must be text or null")
        if not isinstance(self.repair, RepairNote | None):
            raise ValueError("a page request's repair must be a repair note or null")

    def to_dict(self) -> dict:
        """The JSON-able form the Celery task carries."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> PageRequest:
        data = dict(_known(cls, data, "page request"))
        if data.get("repair") is not None:
            repair = _known(RepairNote, data["repair"], "repair note")
            data["repair"] = RepairNote(**{**repair, "errors": tuple(repair.get("errors") or ())})
        return cls(**data)


@dataclass(frozen=True)
class BackendCapabilities:
    """What a backend can do, declared on its class so the web side can read it without loading a model."""

    open_domain: bool = False  # writes pages on any topic; False: only the library's topics (PageRequest.topic)
    revises_pages: bool = True  # a follow-up revises `previous_page`
    streams: Literal["drafts", "tokens"] = "drafts"  # on_draft carries masked blocks, or plain tokens
    context: int = 0  # tokens the prompt and the page share
    # The web tier may ask the backend's model, in one short call, whether an unsure lesson answers a question
    # (`LessonQuestion`): a served model it reaches over HTTP, never a model it would have to load.
    second_opinion: bool = False

    def __post_init__(self) -> None:
        if self.streams not in ("drafts", "tokens"):
            raise ValueError(f"streams must be 'drafts' or 'tokens', not {self.streams!r}")


VERDICTS = ("yes", "no", "unknown")  # a second opinion: "unknown" when the model could not say (slow, failed, unclear)


@dataclass(frozen=True)
class LessonQuestion:
    """A question and the library lesson the router is unsure of, put to the model: does the lesson answer it?"""

    question: str
    lang: str  # the question's language, one of LANGS
    title: str  # the lesson's title
    intro: str = ""  # the lesson's intro, the sentence or two under its title


# A backend that declares nothing is taken to write only library topics: it is never offered a
# question it may answer with a page on another topic.
LIBRARY_ONLY = BackendCapabilities()


@dataclass(frozen=True)
class PageOutcome:
    """How one generation ended, as the worker hands it to the web tier (`explainer.finish_generation`)."""

    status: str  # one of OUTCOME_STATUSES
    html: str = ""  # the page, when done
    stats: dict = field(default_factory=dict)
    error_code: str | None = None  # when failed: a short machine-readable reason
    error_message: str | None = None  # when failed: what to tell the learner

    def __post_init__(self):
        if self.status not in OUTCOME_STATUSES:
            raise ValueError(f"unknown outcome status {self.status!r}: expected one of {', '.join(OUTCOME_STATUSES)}")

    @classmethod
    def failed(cls, code: str, message: str, stats: dict | None = None) -> PageOutcome:
        return cls(status="failed", error_code=code, error_message=message, stats=stats or {})

    def to_dict(self) -> dict:
        """The JSON-able form the Celery message carries; unset fields are left out."""
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}

    @classmethod
    def from_dict(cls, data: dict) -> PageOutcome:
        data = _known(cls, data, "page outcome")
        return cls(**{**data, "html": data.get("html") or "", "stats": data.get("stats") or {}})


def _known(cls, data: dict, what: str) -> dict:
    """`data` if every key is a field of `cls`, else a ValueError naming the strangers."""
    if not isinstance(data, dict):
        raise ValueError(f"a {what} must be a JSON object, got {type(data).__name__}")
    unknown = set(data) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"a {what} has no field(s) {', '.join(sorted(unknown))}")
    return data

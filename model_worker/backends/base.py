"""The seam between the web tier and the engine: what a page backend takes, reports and returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol


@dataclass(frozen=True)
class PageRequest:
    question: str
    lang: str = "en"  # "en" | "zh"
    previous_page: str | None = None  # follow-up: the page being revised
    topic_note: str | None = None  # a teacher's note to the model
    topic: str | None = None  # slug of the library page the router chose; the page to write


class PageSink(Protocol):
    def on_draft(self, block: int, pieces: list[str | None]) -> None: ...  # None = still masked

    def on_commit(self, block: int, text: str) -> None: ...  # one finished block

    def should_stop(self) -> bool: ...  # checked once per block


@dataclass
class PageResult:
    html: str
    # tokens, forwards, tokens_per_forward, forwards_per_s, tokens_per_s, first_block_s, seconds
    stats: dict = field(default_factory=dict)
    stopped: bool = False  # True when should_stop() ended it early


@dataclass(frozen=True)
class BackendCapabilities:
    """What a backend can do, declared on its class so the web side can read it without loading a model."""

    open_domain: bool = False  # writes pages on any topic; False: only the library's topics (PageRequest.topic)
    revises_pages: bool = True  # a follow-up revises `previous_page`
    streams: Literal["drafts", "tokens"] = "drafts"  # on_draft carries masked blocks, or plain tokens
    context: int = 0  # tokens the prompt and the page share

    def __post_init__(self) -> None:
        if self.streams not in ("drafts", "tokens"):
            raise ValueError(f"streams must be 'drafts' or 'tokens', not {self.streams!r}")


# A backend that declares nothing is taken to write only library topics: it is never offered a
# question it may answer with a page on another topic.
LIBRARY_ONLY = BackendCapabilities()


class PageBackend(Protocol):
    capabilities: ClassVar[BackendCapabilities]

    def generate_page(self, request: PageRequest, sink: PageSink) -> PageResult: ...

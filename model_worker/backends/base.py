"""What a page backend is to the engine: it takes a `PageRequest`, streams into a `PageSink`, returns a
`PageResult` (the request and outcome types are the contract's, `model_worker.contract.pages`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from model_worker.contract.pages import BackendCapabilities, LessonQuestion, PageRequest


class PageSink(Protocol):
    def on_draft(self, block: int, pieces: list[str | None]) -> None: ...  # None = still masked

    def on_commit(self, block: int, text: str, tokens: int) -> None: ...  # one finished block of `tokens` tokens

    def should_stop(self) -> bool: ...  # checked once per block


@dataclass
class PageResult:
    html: str
    # tokens, forwards, tokens_per_forward, forwards_per_s, tokens_per_s, first_block_s, seconds
    stats: dict = field(default_factory=dict)
    stopped: bool = False  # True when should_stop() ended it early


class PageBackend(Protocol):
    capabilities: ClassVar[BackendCapabilities]

    def generate_page(self, request: PageRequest, sink: PageSink) -> PageResult: ...


class SecondOpinionBackend(PageBackend, Protocol):
    """A backend whose `capabilities.second_opinion` is set: it also says, in one short call to its model, whether a
    library lesson answers a question ("yes", "no", or "unknown" when the model is slow, fails or answers neither)."""

    def judge(self, ask: LessonQuestion, *, timeout_s: float) -> str: ...


class BackendError(Exception):
    """A backend's failure the learner should hear about by its code: `model_unavailable` (the model or
    its server cannot be reached or refuses), `bad_reply` (it answered, but not with a page)."""

    def __init__(self, code: str, message: str, stats: dict | None = None):
        super().__init__(message)
        self.code, self.message, self.stats = code, message, stats or {}



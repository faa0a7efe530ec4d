"""Why a request did not become a generation, as the learner hears it: an `error` (and the `topic` before it)."""

from __future__ import annotations

from model_worker.contract.events import Error, Topic, TopicRef


class GenerationRejected(Exception):
    """The request cannot become a generation; `code` and `message` go to the learner as an `error`.

    `topic` is the `topic` event that goes before the error (what the router understood); `nearest` and
    `unsure` are an `unknown_topic`'s topics to ask instead. `refund`: nothing was written, so the
    question the rate limits counted is given back.
    """

    def __init__(self, code: str, message: str, *, topic: Topic | None = None,
                 nearest: tuple[TopicRef, ...] | None = None, unsure: bool | None = None, refund: bool = False):
        super().__init__(message)
        self.code, self.message, self.topic = code, message, topic
        self.nearest, self.unsure, self.refund = nearest, unsure, refund

    def error(self, *, request: str | None = None) -> Error:
        return Error(code=self.code, message=self.message, request=request, nearest=self.nearest,
                     unsure=self.unsure)

"""Every event example in docs/protocol.md is what the typed events and the socket's framing send, byte for byte."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from explainer.consumers import error_frame, local_frame, refusal_topic_frame, stream_frame
from model_worker.contract.events import EVENT_TYPES, Error, Topic, from_wire

PROTOCOL = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"


def examples() -> list[str]:
    section = PROTOCOL.read_text(encoding="utf-8").split("### Every event, as sent")[1]
    block = re.search(r"```jsonl\n(.*?)```", section, re.DOTALL).group(1)
    return [line for line in block.splitlines() if line.strip()]


def framed_again(sent: dict) -> dict:
    """The frame the socket builds for the event this example holds."""
    event = from_wire(sent)
    if "generation" not in sent:
        return local_frame(event)
    if sent["id"] != 0:
        return stream_frame(sent["id"], event, sent["generation"])
    if isinstance(event, Error):
        return error_frame(event, sent["generation"])
    assert isinstance(event, Topic)
    return refusal_topic_frame(event)


@pytest.mark.parametrize("line", examples())
def test_a_documented_event_is_framed_again_byte_for_byte(line):
    sent = json.loads(line)
    assert json.dumps(framed_again(sent), ensure_ascii=False) == json.dumps(sent, ensure_ascii=False)


def test_every_event_type_has_a_documented_example():
    documented = {json.loads(line)["type"] for line in examples()}
    assert documented == set(EVENT_TYPES)


def test_an_unknown_event_or_field_is_refused_when_read():
    with pytest.raises(ValueError, match="unknown event type"):
        from_wire({"type": "sparkles"})
    with pytest.raises(ValueError, match="no field"):
        from_wire({"type": "watching", "thread": "t", "colour": "red"})
    with pytest.raises(ValueError, match="retry"):
        from_wire({"type": "retry", "message": "again"})

"""What a generation returns: its tokens, why it stopped, and its speed figures."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class GenerationStats:
    """Figures of one sequence: generated tokens only (never prompt or padding)."""

    tokens: int
    forwards: int  # model calls this sequence took part in with work to do (prefill chunks included)
    seconds: float
    first_block_s: float  # from the call to this sequence's first finished block
    tokens_per_forward: float
    tokens_per_s: float
    forwards_per_s: float

    @classmethod
    def measure(cls, tokens: int, forwards: int, seconds: float, first_block_s: float) -> GenerationStats:
        seconds = max(seconds, 1e-9)
        return cls(tokens, forwards, seconds, first_block_s, tokens / max(forwards, 1), tokens / seconds,
                   forwards / seconds)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class GenerationOutput:
    tokens: list[int]  # generated only, cut before the first EOS
    stopped_by: str  # "eos" | "max_new_tokens" | "stop"
    stats: GenerationStats


def outputs(tokens: list[list[int]], stopped: list[str | None], forwards: list[int], finish: list[float],
            first_block: list[float]) -> list[GenerationOutput]:
    """One `GenerationOutput` per sequence from the decoding loop's per-sequence records."""
    return [
        GenerationOutput(
            tokens=tokens[i],
            stopped_by=stopped[i] or "stop",
            stats=GenerationStats.measure(len(tokens[i]), forwards[i], finish[i], first_block[i]),
        )
        for i in range(len(tokens))
    ]

"""A state a kit page opens in (a step shown, a part's panel open, controls set) and its form in a page URL's
fragment, `#step=3&part=Crater&control.Silica%20in%20the%20magma=57`, which the kit applies once the scene is
ready (static/kit/state.js, docs/kit.md): a link reproduces the state."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, urlencode

CONTROL = "control."
# A fragment longer than this is not one the server wrote; it is ignored rather than parsed.
MAX_FRAGMENT = 2000


@dataclass(frozen=True)
class PageState:
    step: int | None = None  # from 1
    part: str | None = None  # a part's title, as the page shows it
    controls: tuple[tuple[str, str], ...] = field(default=())  # (label, value): a number, on/off, play/pause

    def __bool__(self) -> bool:
        return self.step is not None or self.part is not None or bool(self.controls)

    def control(self, label: str) -> str | None:
        return dict(self.controls).get(label)

    def with_control(self, label: str, value: str) -> PageState:
        """This state with one control set (the others kept, in their order)."""
        kept = tuple((k, v) for k, v in self.controls if k != label)
        return PageState(step=self.step, part=self.part, controls=(*kept, (label, value)))

    def fragment(self) -> str:
        """The URL fragment, without its `#`: `step`, then `part`, then each control, percent-encoded."""
        pairs = [("step", str(self.step))] if self.step is not None else []
        pairs += [("part", self.part)] if self.part is not None else []
        pairs += [(CONTROL + label, value) for label, value in self.controls]
        return urlencode(pairs, quote_via=quote)

    @classmethod
    def from_fragment(cls, fragment: str) -> PageState:
        """The state a fragment names; what it does not name well (an unknown key, a step that is no number)
        is left out, as the kit leaves it."""
        if len(fragment) > MAX_FRAGMENT:
            return cls()
        step, part, controls = None, None, {}
        for key, value in parse_qsl(fragment.lstrip("#"), keep_blank_values=False):
            if key == "step" and value.isdigit() and int(value) >= 1:
                step = int(value)
            elif key == "part":
                part = value
            elif key.startswith(CONTROL) and len(key) > len(CONTROL):
                controls[key[len(CONTROL):]] = value
        return cls(step=step, part=part, controls=tuple(controls.items()))


def number_text(value: float) -> str:
    """A control's value as a fragment writes it: short, with no float noise (57, 3.5, 0.15)."""
    if not math.isfinite(value):
        raise ValueError("a control's value is a finite number")
    text = f"{round(value, 6):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text

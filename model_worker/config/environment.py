"""Numbers read from the environment: a bad value stops start-up with a message naming the variable."""

from __future__ import annotations

import os
from collections.abc import Mapping


def env_number(name: str, default, kind: type = int, *, minimum=None, environ: Mapping[str, str] | None = None):
    """`kind(environ[name])`, or `default` when the variable is unset or empty. Raises ValueError naming the
    variable when the value is not a number of that kind or is below `minimum`."""
    env = os.environ if environ is None else environ
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ValueError(f"{name}={raw!r} is not {what}") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={raw} must be at least {minimum}")
    return value

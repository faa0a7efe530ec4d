"""The outside set: learner questions that no library page answers.

A question near a library topic in meaning ("How do bees make honey?" beside the flower page, whose
bees carry pollen) can score as high as a paraphrase of one of its questions. The outside set holds
such questions, in English and Chinese, each checked against the nearest lesson when written
(`outside.json`). The index refuses a question that one of them is closer to than every sentence of
the best topic (`explainer.library.index`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

OUTSIDE = Path(__file__).with_name("outside.json")
LANGS = ("en", "zh")


def outside_questions(path: Path | None = None) -> tuple[str, ...]:
    """The set's questions (`OUTSIDE` unless `path`); `ValueError` naming the file and the entry when it is
    malformed. The file is read once per process while it is unchanged (start-up checks it, and every
    index build, class libraries' too, reads it again)."""
    path = Path(path or OUTSIDE)
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as exc:
        raise ValueError(f"{path}: not an outside-question set ({exc})") from exc
    return _read(path, stamp)


@functools.lru_cache(maxsize=8)
def _read(path: Path, stamp: int) -> tuple[str, ...]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["questions"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not an outside-question set ({exc})") from exc
    if not isinstance(entries, list):
        raise ValueError(f"{path}: `questions` is not a list")
    out = []
    for n, entry in enumerate(entries):
        question = entry.get("question") if isinstance(entry, dict) else None
        if not isinstance(question, str) or not question.strip() or entry.get("lang") not in LANGS:
            raise ValueError(f"{path}: question {n} needs a non-empty `question` and a `lang` of {LANGS}")
        out.append(question.strip())
    return tuple(out)

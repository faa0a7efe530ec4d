"""Which library pages the suite's slowest browser checks open.

With `FULL_CHECKS=1` (`make test-full`), every page. Otherwise one page per topic, its English and its Chinese page
in turn from one topic to the next (so half the lessons are opened in each language), which keeps `make test`
within its time: the render check of all 160 pages is twenty minutes on two cores. Both versions of a topic are
the same scene with its words translated; the full run opens the other half.
"""

from __future__ import annotations

import os


def full_checks() -> bool:
    return os.environ.get("FULL_CHECKS", "") == "1"


def one_per_topic(pages: list) -> list:
    """The corpus pages (`model_worker.corpus.Page`) to check: all of them with FULL_CHECKS=1."""
    if full_checks():
        return list(pages)
    by_topic: dict[str, list] = {}
    for page in sorted(pages, key=lambda p: (p.lang, p.slug)):
        by_topic.setdefault(page.topic or page.slug, []).append(page)
    return [group[n % len(group)] for n, (_, group) in enumerate(sorted(by_topic.items()))]

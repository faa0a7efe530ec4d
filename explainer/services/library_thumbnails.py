"""The corpus's thumbnails for /library/: each page render-checked once, the check's picture kept as a PNG file."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from explainer.selectors.library_thumbnails import thumbnail_file
from model_worker.corpus import load_pages


@dataclass(frozen=True)
class Pictured:
    slug: str
    outcome: str  # "made" | "kept" (pictured since the page last changed) | "failed" (its check failed: none made)
    detail: str = ""


def library_thumbnails_make(*, slugs: Iterable[str] = (), force: bool = False,
                            on_page: Callable[[Pictured], None] = lambda _: None) -> list[Pictured]:
    """Picture the corpus's pages (`slugs`, or all) that have no thumbnail newer than the page itself.

    Each is render-checked in Chromium (15-40 s on a 2-core machine), so this runs once, from the
    command line, never on a learner's request; a page whose check fails keeps the placeholder.
    """
    from explainer.render_check import check_html

    wanted = set(slugs)
    done = []
    for page in load_pages(Path(settings.LIBRARY_DIR)):
        if wanted and page.slug not in wanted:
            continue
        target = thumbnail_file(page.slug)
        if not force and _fresh(target, Path(settings.LIBRARY_DIR) / "pages" / page.file):
            result = Pictured(page.slug, "kept")
        else:
            report = check_html(page.html)
            if report.passed and report.thumbnail:
                _write(target, report.thumbnail)
                result = Pictured(page.slug, "made")
            else:
                why = ", ".join(report.failed_checks) or report.error or "the check took no picture"
                result = Pictured(page.slug, "failed", why)
        on_page(result)
        done.append(result)
    return done


def _fresh(target: Path, source: Path) -> bool:
    try:
        return target.stat().st_mtime >= source.stat().st_mtime
    except OSError:
        return False


def _write(target: Path, png: bytes) -> None:
    """Write the file whole or not at all: /library/ may be reading the folder meanwhile."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".png.part")
    partial.write_bytes(png)
    os.replace(partial, target)

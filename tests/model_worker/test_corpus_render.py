"""Every exemplar page passes the render check in real Chromium, and its controls really work (one page per topic,
both languages in turn; every page with FULL_CHECKS=1: tests/support/corpus_sample.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from explainer.render_check import check_html
from model_worker.corpus import load_pages
from tests.support.corpus_sample import one_per_topic

CORPUS = Path(__file__).resolve().parents[2] / "model_worker" / "corpus" / "pages"
PAGES = [CORPUS / f"{page.slug}.html" for page in sorted(one_per_topic(load_pages()), key=lambda p: p.slug)]

pytestmark = pytest.mark.browser


def test_the_corpus_has_pages_to_check():
    assert PAGES, "model_worker/corpus/pages/ holds no .html exemplars"


@pytest.mark.parametrize("path", PAGES, ids=[p.stem for p in PAGES])
def test_an_exemplar_passes_the_render_check(path):
    # One warm browser serves every page: the render check keeps it between calls.
    report = check_html(path.read_text(encoding="utf-8"))
    assert report.passed, f"{path.name}: {report.summary()}"
    assert not report.console_errors and not report.page_errors
    interaction = report.metrics["interaction"]
    assert interaction["click"]["part_opened"], f"{path.name}: a click on a part did not open its panel"
    assert "slider" in interaction, f"{path.name}: no slider to move"
    assert interaction["slider"]["canvas_changed"], f"{path.name}: moving the slider left the scene unchanged"

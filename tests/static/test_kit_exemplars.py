"""Every exemplar page works in real Chromium: ready without errors, parts open, controls change the scene (one page
per topic, both languages in turn; every page with FULL_CHECKS=1: tests/support/corpus_sample.py)."""

from __future__ import annotations

import pytest

from model_worker.corpus import load_pages
from model_worker.corpus.coverage import topics
from tests.support.corpus_sample import one_per_topic
from tests.support.kit import kit_state

pytestmark = pytest.mark.browser

PAGES = load_pages()
# Topics written in both languages are library lessons (issue 11): more parts, narration and a quiz.
LIBRARY = {page.slug for by_lang in topics(PAGES).values() if len(by_lang) == 2 for page in by_lang.values()}


def open_exemplar(browser, kit_server, slug, **context_options):
    context = browser.new_context(**context_options)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("request", lambda r: r.url.startswith(kit_server.url) or r.url.startswith("data:")
            or problems.append(f"request to another host: {r.url}"))
    page.goto(f"{kit_server.url}/corpus/{slug}.html")
    state = kit_state(page)
    return context, page, problems, state


def test_the_corpus_has_pages_in_both_languages():
    assert {p.lang for p in PAGES} == {"en", "zh"}


# Clicking a part and moving a control are judged on every exemplar by the render check itself
# (tests/model_worker/test_corpus_render.py): here one visit reads what the kit says the page holds, and
# how it lays out on a phone.
@pytest.mark.parametrize("slug", sorted(p.slug for p in one_per_topic(PAGES)))
def test_an_exemplar_holds_what_its_kind_promises_and_leaves_a_phone_room_for_the_scene(browser, kit_server, slug):
    context, page, problems, state = open_exemplar(browser, kit_server, slug, viewport={"width": 1000, "height": 700})
    try:
        assert state == "ready", page.evaluate("__kit.errors")
        parts = page.evaluate("__kit.parts")
        assert parts, "an exemplar needs at least one clickable part"
        assert any(page.evaluate(f"__kit.pointFor({title!r})") for title in parts), \
            "no part can be clicked in the first view"
        assert page.evaluate("__kit.sliders.length") >= 1, "an exemplar needs a timeline or a slider"
        if slug in LIBRARY:
            assert len(parts) >= 3
            assert page.evaluate("__kit.step().count") >= 4
            assert page.evaluate("__kit.quiz.count") == 3
            page.locator(".kit-quiz-open").click()
            page.locator(".kit-quiz-option").first.click()
            assert page.locator(".kit-quiz-feedback").inner_text()
            page.keyboard.press("Escape")

        # Turned into a phone: nothing sticks out sideways, and the cards leave a third of the screen.
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(200)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        free = page.evaluate(
            "document.querySelector('.kit-dock').getBoundingClientRect().top"
            " - document.querySelector('.kit-top').getBoundingClientRect().bottom"
        )
        assert free >= 844 / 3, f"only {free:.0f} px left for the scene"
        assert problems == []
        assert page.evaluate("__kit.state") == "ready"
    finally:
        context.close()

"""Kit-grounded prompts for capable models, and the page taken out of a chat reply."""

from __future__ import annotations

import re

from model_worker.backends.chat_prompt import build_messages
from model_worker.backends.kit_reference import KIT_DIR, kit_hash, reference_hash, reference_text
from model_worker.backends.reply import page_from_reply, page_problems
from model_worker.contract.pages import PageRequest, RepairNote
from model_worker.corpus import load_pages


def kit_exports() -> set[str]:
    """`start`, `THREE` and every method `start()` returns (the shapes spread in by name)."""
    kit = (KIT_DIR / "kit.js").read_text()
    shapes = (KIT_DIR / "shapes.js").read_text()
    returned = kit[kit.rindex("return {"):]
    names = set(re.findall(r"\b([a-z][A-Za-z]+)\b(?=[,:\s])", returned)) - {"return", "shapes", "scene", "parts",
                                                                            "controlsDock", "THREE"}
    body = shapes[shapes.index("export function shapes"):]
    names |= set(re.findall(r"^\s{4}(\w+)(?::|\()", body, re.M))
    return names | {"start", "THREE"}


def test_the_reference_mentions_every_function_the_kit_exports():
    text = reference_text()
    missing = [name for name in sorted(kit_exports()) if name not in text]
    assert not missing, missing
    assert {"sphere", "timeline", "slider", "part", "onFrame"} <= kit_exports()


def test_the_reference_names_the_kit_sources_it_was_written_for():
    assert reference_hash() == kit_hash(), "static/kit changed: update REFERENCE.md and rerun kit_reference"


def test_a_question_gets_the_kit_reference_the_routers_library_page_and_the_asked_language():
    atom = next(p for p in load_pages() if p.slug == "atom")
    messages = build_messages(PageRequest(question="原子里有什么？", lang="zh", topic="atom"))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "app.timeline" in messages[0]["content"] and "Simplified Chinese" in messages[0]["content"]
    assert atom.html.strip() in messages[2]["content"]
    assert messages[-1]["content"] == "原子里有什么？"
    assert len(build_messages(PageRequest(question="Why?", topic="atom"), examples=False)) == 2


def test_a_follow_up_sends_the_current_page_and_asks_for_the_whole_revised_page():
    [_, ask] = build_messages(PageRequest(question="Make it slower", previous_page="<html>v1</html>"))
    assert "<html>v1</html>" in ask["content"] and "whole revised page" in ask["content"]


def test_a_repair_sends_the_failing_page_and_what_the_check_found():
    note = RepairNote(page="<html>bad</html>", errors=("canvas: blank", "console error: boom"), attempt=1)
    [_, ask] = build_messages(PageRequest(question="Why?", repair=note))
    assert "canvas: blank" in ask["content"] and "<html>bad</html>" in ask["content"]
    assert PageRequest.from_dict(PageRequest(question="Why?", repair=note).to_dict()).repair == note


def test_the_page_is_taken_from_fences_or_prose_and_validated():
    page = ('<!doctype html><html><body><script type="importmap">{"imports": {"kit": "/static/kit/kit.js"}}'
            '</script><script type="module">import { start } from "kit";</script></body></html>')
    assert page_from_reply(f"Sure! Here it is:\n```html\n{page}\n```\nHope it helps.") == page + "\n"
    assert page_from_reply(f"Here: {page} -- done") == page + "\n"
    assert page_from_reply("I cannot draw that.") == ""
    assert page_problems(page) == []
    assert "no closing </html>" in page_problems("<!doctype html><html><body>")[0]
    assert any("kit import" in p for p in page_problems("<!doctype html><html><body></body></html>"))
    assert page_problems("<!doctype html> </html>", kit=False) == ["no <body> or <script>: the page shows nothing"]


def test_every_request_in_one_language_begins_with_the_same_bytes_so_a_prefix_cache_hits():
    """vLLM and SGLang cache a prompt's prefix: the system message (kit reference first) is one string per
    language whatever the question, topic, teacher's note, follow-up or repair; what varies comes after it."""
    note = RepairNote(page="<html>bad</html>", errors=("canvas: blank",), attempt=1)
    for lang, question in (("en", "Why is the sky blue?"), ("zh", "天空为什么是蓝色的？")):
        requests = [PageRequest(question=question, lang=lang), PageRequest(question="Tides?", lang=lang, topic="tides"),
                    PageRequest(question=question, lang=lang, topic="sky-blue", topic_note="Use the word scatter."),
                    PageRequest(question="bigger", lang=lang, previous_page="<html>page</html>"),
                    PageRequest(question=question, lang=lang, repair=note)]
        systems = {build_messages(r)[0]["content"] for r in requests}
        assert len(systems) == 1
        assert systems.pop().index("# The page kit") < 1000  # the kit reference right after the short rules
    noted = build_messages(PageRequest(question="Why?", topic="sky-blue", topic_note="Use the word scatter."))
    assert noted[-1]["content"].startswith("The teacher's note for this topic: Use the word scatter.")
    assert build_messages(PageRequest(question="Why?"))[0] != build_messages(PageRequest(question="为什么？", lang="zh"))[0]

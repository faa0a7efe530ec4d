"""Over the learner's socket: what the router understood comes first, and an unknown topic is refused."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from explainer.models import Generation, Thread, TopicRequest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@database_sync_to_async
def rows() -> tuple[int, int, list[str]]:
    return Thread.objects.count(), Generation.objects.count(), list(TopicRequest.objects.values_list("question", flat=True))


async def test_the_topic_event_names_the_library_page_before_any_draft(connect):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "彩虹是怎么形成的？", "lang": "zh"})
    queued = await ws.receive_json_from(timeout=10)
    topic = await ws.receive_json_from(timeout=10)
    assert queued["type"] == "queued"
    assert (topic["type"], topic["id"], topic["generation"]) == ("topic", 2, queued["generation"])
    assert (topic["slug"], topic["title"], topic["lang"]) == ("zh-rainbow", "彩虹和光的色散", "zh")
    assert topic["score"] > 0 and topic["nearest"][0]["slug"] == "zh-rainbow"


async def test_a_question_asked_without_a_language_is_answered_in_its_own(connect):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "为什么月亮会有圆有缺？"})
    await ws.receive_json_from(timeout=10)
    topic = await ws.receive_json_from(timeout=10)
    assert (topic["slug"], topic["lang"]) == ("zh-moon-phases", "zh")
    assert await database_sync_to_async(lambda: Generation.objects.get().lang)() == "zh"


@pytest.fixture
def rainbow_in_chinese_only(monkeypatch):
    """The library as it was while rainbows had a Chinese page only."""
    from explainer.selectors import library

    pages = tuple(p for p in library._corpus_pages() if p.slug != "rainbow")
    monkeypatch.setattr(library, "_corpus_pages", lambda: pages)


async def test_an_english_question_on_a_chinese_only_topic_says_the_page_is_chinese(connect, rainbow_in_chinese_only):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": "How does a rainbow form?", "lang": "en"})
    await ws.receive_json_from(timeout=10)
    topic = await ws.receive_json_from(timeout=10)
    assert (topic["slug"], topic["lang"]) == ("zh-rainbow", "zh")


async def test_an_unknown_topic_is_refused_with_clickable_nearest_topics_and_nothing_written(connect):
    ws = await connect()
    question = "How does a refrigerator keep food cold?"
    await ws.send_json_to({"type": "ask", "question": question})
    topic = await ws.receive_json_from(timeout=10)
    error = await ws.receive_json_from(timeout=10)
    assert (topic["type"], topic["slug"], topic["generation"]) == ("topic", None, None)
    assert (error["type"], error["code"], error["request"]) == ("error", "unknown_topic", "ask")
    assert error["message"] and 1 <= len(error["nearest"]) <= 3
    assert error["unsure"] is True  # near the library's topics, though none is about it
    assert set(error["nearest"][0]) == {"slug", "title"}
    assert await rows() == (0, 0, [question])

    # Clicking a nearest topic asks for it by its slug.
    pick = error["nearest"][0]
    await ws.send_json_to({"type": "ask", "question": pick["title"], "topic": pick["slug"]})
    queued = await ws.receive_json_from(timeout=10)
    topic = await ws.receive_json_from(timeout=10)
    assert queued["type"] == "queued" and topic["slug"] == pick["slug"] and topic["score"] is None


@pytest.mark.parametrize(
    ("question", "code"),
    [("🤔🤔🤔", "empty_question"), ("\u200b\u200b", "empty_question"), ("?!", "empty_question"),
     ("Почему небо голубое?", "unsupported_language"), ("空はなぜ青いのですか？", "unsupported_language"),
     ("¿Por qué el cielo es azul?", "unsupported_language")],
)
async def test_bad_questions_get_a_clear_error_and_write_nothing(connect, question, code):
    ws = await connect()
    await ws.send_json_to({"type": "ask", "question": question})
    error = await ws.receive_json_from(timeout=10)
    assert (error["type"], error["code"]) == ("error", code) and error["message"]
    assert await rows() == (0, 0, [])

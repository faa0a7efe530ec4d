"""/library/: every topic as a card in the interface's language, grouped, filtered, searched as the router
scores a question; a card opens the lesson as a new thread; any search gets a page."""

from __future__ import annotations

import ast
import json
import re

import pytest
from django.urls import reverse

from explainer.models import Classroom, Generation, LibraryPage, Thread
from explainer.selectors.exemplars import exemplar_html
from explainer.selectors.library import library_index, question_route
from explainer.services.asking import generation_create
from model_worker.contract import stream
from model_worker.corpus import load_pages
from tests.explainer.teacher.conftest import tiny_png
from tests.support.queues import gpu_requests

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

CARD = re.compile(r'<li class="card" data-topic="([^"]+)">')
OPENS = re.compile(r'name="slug" value="([^"]+)" class="card-open"')


def shelf(client, lang="en", **params) -> str:
    response = client.get(reverse("library"), params, HTTP_ACCEPT_LANGUAGE=lang)
    assert response.status_code == 200
    return response.content.decode()


def cards(html: str) -> list[str]:
    return CARD.findall(html)


def test_the_library_lists_every_topic_once_grouped_by_subject_with_the_other_language_a_click_away(client):
    html = shelf(client)
    topics = {p.topic for p in load_pages()}
    assert sorted(cards(html)) == sorted(topics) and len(topics) == 80
    for subject in ("Biology", "Astronomy", "Physics", "Chemistry", "Earth science"):
        assert f'{subject} <span class="count">' in html
    # The English page opens from the card; the Chinese one from the button beside it.
    assert 'value="volcanoes" class="card-open" lang="en"' in html
    assert 'value="zh-volcanoes" class="card-other" lang="zh"' in html
    assert "How volcanoes erupt" in html


def test_a_chinese_interface_shows_the_chinese_titles_and_english_one_click_away(client):
    html = shelf(client, lang="zh-CN,zh;q=0.9")
    assert set(OPENS.findall(html)) == {p.slug for p in load_pages() if p.lang == "zh"}
    assert 'value="volcanoes" class="card-other" lang="en"' in html
    assert '<html lang="zh">' in html


def test_the_grade_and_curriculum_filters_keep_only_the_topics_that_carry_them(client):
    pages = [p for p in load_pages() if p.lang == "en"]
    in_grade_9 = {p.topic for p in pages if int(p.grade.split("-")[0]) <= 9 <= int(p.grade.split("-")[1])}
    assert 0 < len(in_grade_9) < 80
    assert set(cards(shelf(client, grade=9))) == in_grade_9
    on_code = {p.topic for p in pages if "MS-ESS2-2" in p.curriculum}
    assert set(cards(shelf(client, code="MS-ESS2-2"))) == on_code and "volcanoes" in on_code
    assert set(cards(shelf(client, code="MS-ESS2-2", grade=9))) == on_code & in_grade_9
    assert cards(shelf(client, code="初中地理·海陆的变迁"))  # a Chinese curriculum unit filters too


@pytest.mark.parametrize(("query", "lang"), [
    ("Why do some volcanoes explode?", "en"),
    ("How do plants make food from sunlight?", "en"),
    ("magnets", "en"),
    ("海水为什么一天涨落两次？", "zh"),
    ("光合作用", "zh"),
])
def test_a_search_finds_first_the_topic_the_same_question_would_be_answered_with(client, query, lang):
    route = question_route(question=query, lang=lang)
    assert route.page is not None
    found = cards(shelf(client, q=query))
    assert found[0] == route.page.topic
    assert all(t in found for t in (p.topic for p in route.nearest))


def test_a_search_the_library_has_nothing_for_offers_what_a_refusal_would(client):
    query = "How do I fix a flat bicycle tyre?"
    route = question_route(question=query, lang="en")
    assert route.page is None
    assert cards(shelf(client, q=query))[: len(route.nearest)] == [p.topic for p in route.nearest]


@pytest.mark.parametrize("query", [
    "", "   ", "x" * 20_000, "volcano " * 2_000, "<script>alert('shelf')</script>", "<b>volcano</b>",
    "<|im_start|>system", "مرحبا كيف حالك", "Привет", "😀🌋", "\x00\x01", "%00", "' OR 1=1 --", "火山" * 600,
    "{{ 7*7 }}", "\u202egnirts",
])
def test_any_search_gets_an_answer_page_never_an_error(client, query):
    html = shelf(client, q=query, grade="not-a-grade", code="<i>x</i>")
    assert "<script>alert" not in html and "<i>x</i>" not in html  # what was typed is shown as text
    assert "<b>volcano</b>" not in html


def test_markup_in_a_search_is_searched_as_its_words(client):
    assert cards(shelf(client, q="<b>volcano</b>"))[0] == "volcanoes"


@pytest.mark.parametrize("grade", ["7", "07", "99", "-1", "1e3", "٣"])
def test_an_odd_grade_filters_or_is_ignored_but_always_answers(client, grade):
    shelf(client, grade=grade)


def test_opening_a_card_starts_a_thread_whose_first_version_is_the_library_page_from_the_library(
    client, redis_db, django_capture_on_commit_callbacks
):
    client.get(reverse("library"))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("library-open"), {"slug": "volcanoes"})
    thread = Thread.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("thread", args=[thread.pk])
    assert thread.session_key == client.session.session_key and thread.topic_slug == "volcanoes"
    page = thread.pages.get()
    assert (page.version, page.html) == (1, exemplar_html("volcanoes"))
    generation = page.generation
    assert (generation.question, generation.lang, generation.status) == ("How volcanoes erupt", "en", "done")
    assert generation.stats == {"source": "library", "library_page": "volcanoes"}
    events = stream.decode(stream.since(redis_db, str(generation.pk)))
    assert [e["type"] for e in events] == ["queued", "topic", "done"]
    assert (events[1]["slug"], events[1]["source"]) == ("volcanoes", "library")
    [check] = [json.loads(raw) for raw in redis_db.lrange("qa", 0, -1)]  # it goes through the render check
    assert ast.literal_eval(check["headers"]["argsrepr"]) == [page.pk]

    view = client.get(response["Location"]).content.decode()
    topic = json.loads(re.search(r'<script id="thread-topic" type="application/json">(.*?)</script>', view)[1])
    assert (topic["slug"], topic["source"]) == ("volcanoes", "library")  # the view says "From the library"
    assert f'data-checking-page="{page.pk}"' in view  # and waits for the check's verdict


def test_a_follow_up_on_an_opened_lesson_goes_on_from_its_page_as_on_an_answer(
    client, redis_db, django_capture_on_commit_callbacks
):
    client.get(reverse("library"))
    client.post(reverse("library-open"), {"slug": "zh-volcanoes"})
    thread = Thread.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        follow_up = generation_create(question="岩浆更稀一点会怎样？", session_key=client.session.session_key,
                                      thread_id=thread.pk)
    assert follow_up.kind == Generation.Kind.FOLLOW_UP
    [(_, request)] = gpu_requests(redis_db)
    assert request["topic"] == "zh-volcanoes" and request["previous_page"] == exemplar_html("zh-volcanoes")


def test_a_class_sees_its_own_pages_first_with_their_pictures(client, redis_db, django_user_model):
    classroom = Classroom.objects.create(name="7B", teacher=django_user_model.objects.create_user("t", password="x"))
    html = next(p.html for p in load_pages() if p.slug == "magnetism")
    LibraryPage.objects.create(classroom=classroom, slug="our-magnets", title="Our magnet lab", lang="en",
                               topic="our-magnets", questions=["What do our magnets do?"], html=html,
                               source=LibraryPage.Source.PASTE, thumbnail=tiny_png())
    client.post(reverse("join"), {"join_code": classroom.join_code, "display_name": "Mia"})
    page = shelf(client)
    assert cards(page)[0] == "our-magnets"
    assert page.index("Your class&#x27;s pages") < page.index("Biology")
    assert "/library/thumbnails/our-magnets.png" in page
    picture = client.get(reverse("library-thumbnail", args=["our-magnets"]))
    assert picture.status_code == 200 and picture["Content-Type"] == "image/png"
    assert cards(shelf(client, q="What do our magnets do?"))[0] == "our-magnets"
    client.post(reverse("library-open"), {"slug": "our-magnets"})
    assert Thread.objects.get().classroom == classroom
    # Another browser, in no class, has no such page.
    client.post(reverse("join-leave"))
    assert "our-magnets" not in cards(shelf(client))
    assert client.post(reverse("library-open"), {"slug": "our-magnets"}).status_code == 404


def test_a_class_that_asks_in_english_only_gets_english_cards_only(client, redis_db, django_user_model):
    classroom = Classroom.objects.create(name="7B", languages=["en"],
                                         teacher=django_user_model.objects.create_user("t", password="x"))
    client.post(reverse("join"), {"join_code": classroom.join_code, "display_name": "Mia"})
    page = shelf(client, lang="zh-CN")
    assert 'class="card-other"' not in page and 'lang="zh"' not in page.split("<main>")[1]
    assert client.post(reverse("library-open"), {"slug": "zh-volcanoes"}).status_code == 404


@pytest.mark.parametrize("slug", ["no-such-page", "", "../../etc/passwd", "x" * 500])
def test_a_card_for_a_page_the_library_lacks_is_not_found(client, redis_db, slug):
    assert client.post(reverse("library-open"), {"slug": slug}).status_code == 404
    assert not Thread.objects.exists()


def test_opening_a_lesson_counts_toward_the_hourly_limit_and_a_refusal_says_why_on_the_shelf(
    client, redis_db, settings
):
    settings.ANON_QUESTIONS_PER_SESSION_HOUR = 1
    assert client.post(reverse("library-open"), {"slug": "volcanoes"}).status_code == 302
    refused = client.post(reverse("library-open") + "?q=volcano", {"slug": "tides"})
    assert refused.status_code == 429
    text = refused.content.decode()
    assert "You have asked a lot of questions this hour" in text and cards(text)[0] == "volcanoes"
    assert Thread.objects.count() == 1


def test_a_card_shows_the_placeholder_until_its_page_is_pictured(client, settings, tmp_path):
    settings.LIBRARY_THUMBNAILS_DIR = tmp_path
    assert "/static/app/library-placeholder.svg" in shelf(client)
    assert client.get(reverse("library-thumbnail", args=["volcanoes"]))["Location"].endswith(
        "/static/app/library-placeholder.svg")
    (tmp_path / "volcanoes.png").write_bytes(tiny_png())
    page = shelf(client)
    assert "/library/thumbnails/volcanoes.png" in page and "/library/thumbnails/tides.png" not in page
    picture = client.get(reverse("library-thumbnail", args=["volcanoes"]))
    assert picture.status_code == 200 and picture.content == tiny_png()


def test_the_header_and_the_home_page_link_to_the_library(client):
    home = client.get(reverse("home")).content.decode()
    assert home.count(f'href="{reverse("library")}"') == 2


def test_the_search_uses_the_router_s_own_index(client, monkeypatch):
    """The shelf scores with `LibraryIndex.scores`, the very scores that route a question."""
    index = library_index()
    asked = []
    real = type(index).scores
    monkeypatch.setattr(type(index), "scores", lambda self, q: asked.append(q) or real(self, q))
    shelf(client, q="tides")
    assert asked == ["tides"]

"""Routing that learns, over the learner's socket: a learner's pick from an unsure refusal routes the same question
for the class's other learners; a teacher's "wrong page" refuses it and its paraphrases; both hold with the process's
caches gone; a flagged question is never learned; a learner who moves on straight away teaches nothing."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from explainer.models import Classroom, Generation, LearnedRoute, Learner, PageVersion, TopicRequest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

# Refused as unsure by the library as shipped, with the combustion page offered first (tests/data/router_questions.json).
UNSURE = "why won't wet wood catch fire at camp"
ROUTED = "Why does a compass needle point north?"  # the magnetism page, well above the threshold
PARAPHRASE = "Why does the needle of a compass always point to the north?"


@pytest.fixture(scope="module", autouse=True)
def library_indexed():
    """The library's index built once, before any socket waits on it (a minute on a busy machine)."""
    from explainer.selectors.library import index_for, library_pages

    index_for(library_pages())


@pytest.fixture(autouse=True)
def stay_at_once(settings):
    settings.ROUTE_LEARN_STAY_S = 0


@pytest.fixture
def fresh_process():
    """What a restarted web process has: no index, no library read yet."""
    from explainer.selectors import library

    def restart():
        library.index_for.cache_clear()
        library._corpus_pages.cache_clear()

    return restart


@database_sync_to_async
def browser_in(classroom: Classroom | None, name: str) -> str:
    """A saved browser session; in `classroom`, as a learner who joined it."""
    session = SessionStore()
    if classroom is not None:
        session["learner_id"] = Learner.objects.create(classroom=classroom, display_name=name).pk
    session.create()
    return session.session_key


@database_sync_to_async
def a_class(name: str = "7B") -> Classroom:
    teacher = get_user_model().objects.create_user(f"t-{name}", password="pw-123456789")
    return Classroom.objects.create(name=name, teacher=teacher)


async def ask(ws, question: str, topic: str | None = None) -> tuple[dict, dict]:
    """Ask; the `topic` event and what followed it (`queued` before it for a page, `error` after it for a refusal)."""
    message = {"type": "ask", "question": question}
    if topic:
        message["topic"] = topic
    await ws.send_json_to(message)
    first = await ws.receive_json_from(timeout=30)
    if first["type"] == "queued":
        return await ws.receive_json_from(timeout=30), first
    return first, await ws.receive_json_from(timeout=30)


async def test_a_learner_s_pick_routes_the_question_for_their_class_and_survives_a_restart(connect, fresh_process):
    classroom = await a_class()
    ws = await connect(await browser_in(classroom, "Mia"))
    topic, refusal = await ask(ws, UNSURE)
    assert (refusal["code"], refusal["unsure"]) == ("unknown_topic", True)
    assert refusal["nearest"][0]["slug"] == "combustion"
    pick = refusal["nearest"][0]
    topic, queued = await ask(ws, pick["title"], topic=pick["slug"])
    assert queued["type"] == "queued" and topic["slug"] == "combustion"

    fresh_process()
    other = await connect(await browser_in(classroom, "Leo"))
    topic, queued = await ask(other, UNSURE)
    assert (queued["type"], topic["slug"]) == ("queued", "combustion")
    assert topic["score"] >= 0.46
    # Outside the class, nobody taught the router yet: the same question is still refused.
    stranger = await connect(await browser_in(None, ""))
    topic, refusal = await ask(stranger, UNSURE)
    assert refusal["code"] == "unknown_topic" and topic["slug"] is None


async def test_a_learner_who_asks_for_something_else_straight_away_teaches_nothing(connect, settings):
    settings.ROUTE_LEARN_STAY_S = 600
    classroom = await a_class()
    ws = await connect(await browser_in(classroom, "Mia"))
    _, refusal = await ask(ws, UNSURE)
    await ask(ws, refusal["nearest"][0]["title"], topic=refusal["nearest"][0]["slug"])
    await ask(ws, "How do volcanoes erupt?")  # went on to another topic before staying
    withdrawn = await database_sync_to_async(lambda: list(LearnedRoute.objects.values_list("withdrawn_at", flat=True)))()
    assert len(withdrawn) == 1 and withdrawn[0] is not None
    other = await connect(await browser_in(classroom, "Leo"))
    _, refusal = await ask(other, UNSURE)
    assert refusal["code"] == "unknown_topic"


async def test_a_flagged_question_is_never_learned(connect):
    classroom = await a_class()
    ws = await connect(await browser_in(classroom, "Mia"))
    flagged = "why won't wet wood catch fire at camp even with alcohol"  # "alcohol": a moderation flag term
    topic, refusal = await ask(ws, flagged)
    assert (refusal["code"], refusal["unsure"]) == ("unknown_topic", True)
    await ask(ws, refusal["nearest"][0]["title"], topic=refusal["nearest"][0]["slug"])
    assert await database_sync_to_async(LearnedRoute.objects.count)() == 0


@database_sync_to_async
def teacher_says_wrong(classroom: Classroom, generation_id) -> Client:
    """The class's teacher, in the review gallery, says the page the question got is the wrong one."""
    generation = Generation.objects.get(pk=generation_id)
    page = PageVersion.objects.create(thread=generation.thread, generation=generation, version=1, html="<p>page</p>")
    client = Client()
    client.force_login(classroom.teacher)
    response = client.post(f"/teacher/pages/{page.pk}/route/wrong-page/")
    assert response.status_code == 302
    return client


async def test_a_teacher_s_wrong_page_refuses_the_question_and_its_paraphrase_in_the_class(connect, fresh_process):
    classroom = await a_class()
    ws = await connect(await browser_in(classroom, "Mia"))
    topic, queued = await ask(ws, ROUTED)
    assert topic["slug"] == "magnetism"
    client = await teacher_says_wrong(classroom, queued["generation"])

    fresh_process()
    for name, question in (("Leo", ROUTED), ("Kai", PARAPHRASE)):
        other = await connect(await browser_in(classroom, name))
        topic, refusal = await ask(other, question)
        assert (refusal["type"], refusal["code"]) == ("error", "unknown_topic"), question
        assert "magnetism" not in [n["slug"] for n in refusal["nearest"]][:1], question
    # The question is now a requested topic of the class, and what the router learned is listed there to undo.
    page = await database_sync_to_async(lambda: client.get(f"/teacher/classes/{classroom.pk}/requested-topics/"))()
    html = page.content.decode()
    assert ROUTED in html and 'id="learned-routes"' in html and "not <code>magnetism</code>" in html
    assert await database_sync_to_async(TopicRequest.objects.filter(wrong_page="magnetism").count)() == 1
    # Another class still gets the page.
    elsewhere = await connect(await browser_in(await a_class("8C"), "Ana"))
    topic, _ = await ask(elsewhere, ROUTED)
    assert topic["slug"] == "magnetism"

    # Undone, the class gets the page again.
    route = await database_sync_to_async(LearnedRoute.objects.get)(kind="wrong")
    await database_sync_to_async(lambda: client.post(f"/teacher/learned/{route.pk}/undo/"))()
    again = await connect(await browser_in(classroom, "Zoe"))
    topic, _ = await ask(again, ROUTED)
    assert topic["slug"] == "magnetism"

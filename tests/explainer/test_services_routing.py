"""Asking routes the question to a library topic first: the model is asked for that page, or nothing runs."""

from __future__ import annotations

import ast
import json

import pytest
from django.contrib.auth import get_user_model

from explainer.models import Classroom, Generation, Learner, LibraryPage, Thread, TopicRequest
from explainer.selectors.exemplars import exemplar_html
from explainer.services.asking import generation_create
from explainer.services.finishing import generation_finish
from explainer.services.rejection import GenerationRejected
from model_worker.contract import stream
from model_worker.contract.pages import PageOutcome
from tests.support.library import nearest_page
from tests.support.net import OPEN_DOMAIN_TEST_BACKEND
from tests.support.queues import gpu_requests, gpu_waiting

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

UNKNOWN = "How does a refrigerator keep food cold?"  # shares words with some topics, but none is about it


def ask(django_capture_on_commit_callbacks, **kwargs) -> Generation:
    with django_capture_on_commit_callbacks(execute=True):
        return generation_create(session_key="s1", **kwargs)


def finish(django_capture_on_commit_callbacks, generation, **outcome):
    with django_capture_on_commit_callbacks(execute=True):
        return generation_finish(generation_id=generation.pk, outcome=PageOutcome(**outcome))


def events_of(redis_db, generation: Generation) -> list[dict]:
    return stream.decode(stream.since(redis_db, str(generation.pk)))


def test_the_model_is_asked_for_the_routed_page_and_the_topic_event_follows_queued(
    redis_db, django_capture_on_commit_callbacks
):
    generation = ask(django_capture_on_commit_callbacks, question="海水为什么一天涨落两次？", lang="zh")
    [(_, request)] = gpu_requests(redis_db)
    assert (request["topic"], request["lang"]) == ("zh-tides", "zh")  # the topic's page in the asked language
    queued, topic = events_of(redis_db, generation)[:2]
    assert (queued["type"], topic["type"], topic["id"]) == ("queued", "topic", 2)
    assert (topic["slug"], topic["title"], topic["lang"], topic["source"]) == ("zh-tides", "潮汐是怎样形成的", "zh",
                                                                               "model")
    assert topic["score"] > 0.2 and topic["nearest"][0] == {"slug": "zh-tides", "title": "潮汐是怎样形成的"}
    assert generation.thread.topic_slug == "zh-tides"


def test_a_library_page_the_checkpoint_never_learned_is_served_from_the_library_and_render_checked(
    redis_db, django_capture_on_commit_callbacks, settings
):
    settings.MODEL_BACKEND = "clover"  # the demo checkpoint, whose record lists the pages it learned
    generation = ask(django_capture_on_commit_callbacks, question="白天的天空为什么是蓝的？", lang="zh")
    assert gpu_waiting(redis_db) == 0  # no model runs: it would write another topic's page
    generation.refresh_from_db()
    assert generation.status == Generation.Status.DONE
    assert generation.stats == {"source": "library", "library_page": "zh-sky-blue"}
    page = generation.thread.pages.get()
    assert page.html == exemplar_html("zh-sky-blue")
    events_ = events_of(redis_db, generation)
    assert [e["type"] for e in events_] == ["queued", "topic", "done"]
    assert (events_[1]["slug"], events_[1]["lang"], events_[1]["source"]) == ("zh-sky-blue", "zh", "library")
    assert events_[2]["stats"]["source"] == "library"
    [check] = [json.loads(raw) for raw in redis_db.lrange("qa", 0, -1)]
    assert check["headers"]["task"] == "explainer.render_check"
    assert ast.literal_eval(check["headers"]["argsrepr"]) == [page.pk]


def test_a_follow_up_neither_the_lesson_nor_the_model_can_show_gets_the_nearest_topics_and_adds_no_version(
    redis_db, django_capture_on_commit_callbacks, settings
):
    settings.MODEL_BACKEND = "clover"
    first = ask(django_capture_on_commit_callbacks, question="白天的天空为什么是蓝的？", lang="zh")
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="能把太阳放低一点，看看日落吗？", session_key="s1", thread_id=first.thread.pk)
    assert refused.value.code == "unknown_topic" and "资料库" in refused.value.message
    nearest = [t.slug for t in refused.value.nearest]
    assert nearest and "zh-sky-blue" not in nearest  # the learner is reading it
    assert refused.value.topic is None and refused.value.refund
    assert first.thread.pages.count() == 1 and first.thread.generations.count() == 1
    assert gpu_waiting(redis_db) == 0 and not TopicRequest.objects.exists()


def test_a_follow_up_the_lesson_itself_answers_is_the_lesson_in_that_state_at_once(
    redis_db, django_capture_on_commit_callbacks, settings
):
    settings.MODEL_BACKEND = "clover"
    first = ask(django_capture_on_commit_callbacks, question="白天的天空为什么是蓝的？", lang="zh")
    redis_db.delete("qa")
    follow = ask(django_capture_on_commit_callbacks, question="空气多一些", thread_id=first.thread.pk)
    follow.refresh_from_db()
    page = follow.page
    assert (follow.kind, follow.status, page.version, page.html) == ("follow_up", "done", 2, first.page.html)
    state = "control.%E7%A9%BA%E6%B0%94%E5%A4%9A%E5%B0%91=1.5"  # 空气多少: 1 and a quarter of 0.2..2
    assert page.state == state and follow.stats == {"source": "page", "state": state, "page": first.page.pk}
    queued, topic, done = events_of(redis_db, follow)
    assert (queued["position"], topic["slug"], topic["source"]) == (0, "zh-sky-blue", "page")
    assert done["state"] == state and done["page_url"].endswith("#" + state)
    assert len(redis_db.lrange("qa", 0, -1)) == 1 and gpu_waiting(redis_db) == 0  # checked; no model


BEES_HTML = """<!doctype html><html lang="en"><head><title>How bees make honey</title></head><body>
<script type="module">import { start } from "kit";
const app = start({ title: "How bees make honey", intro: "Worker bees turn flower nectar into honey in the hive." });
app.part(app.group(), { title: "Nectar", text: "Foragers sip nectar from flowers and carry it home in their honey stomach." });
</script></body></html>"""


def test_a_page_a_teacher_adds_is_routed_to_on_the_classes_next_question(
    redis_db, django_capture_on_commit_callbacks
):
    teacher = get_user_model().objects.create_user("t", password="pw-123456789")
    classroom = Classroom.objects.create(name="7B", teacher=teacher)
    other = Classroom.objects.create(name="7C", teacher=teacher)
    learner = Learner.objects.create(classroom=classroom, display_name="Ada")
    outsider = Learner.objects.create(classroom=other, display_name="Bo")
    question = "How do honey bees turn nectar into honey?"
    with pytest.raises(GenerationRejected):  # before the page: nothing in the library answers it
        generation_create(question=question, session_key="s1", learner=learner)

    added = LibraryPage.objects.create(classroom=classroom, slug="honey-bees", title="How bees make honey", lang="en",
                                       topic="honey-bees", questions=["How do bees make honey?"], html=BEES_HTML,
                                       source=LibraryPage.Source.PASTE)
    generation = ask(django_capture_on_commit_callbacks, question=question, learner=learner)
    topic = events_of(redis_db, generation)[1]
    assert (topic["slug"], topic["title"], topic["source"]) == ("honey-bees", "How bees make honey", "library")
    assert generation.thread.pages.get().html == BEES_HTML and gpu_waiting(redis_db) == 0

    # Another class's learners do not see it; once deleted, the class's learners no longer get it.
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question=question, session_key="s2", learner=outsider)
    assert refused.value.code == "unknown_topic"
    added.delete()
    with pytest.raises(GenerationRejected):
        generation_create(question=question, session_key="s1", learner=learner)
    # A follow-up in the thread it answered is not routed elsewhere: the learner is told the page is gone.
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="Why do bees dance?", session_key="s1", learner=learner,
                          thread_id=generation.thread_id)
    assert refused.value.code == "cannot_revise" and "has been removed" in refused.value.message


def test_an_unknown_topic_is_refused_with_nearest_topics_and_recorded_for_the_teacher(redis_db):
    teacher = get_user_model().objects.create_user("t", password="pw-123456789")
    classroom = Classroom.objects.create(name="7B", teacher=teacher)
    learner = Learner.objects.create(classroom=classroom, display_name="Ada")
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question=UNKNOWN, session_key="s1", learner=learner)
    assert refused.value.code == "unknown_topic" and "not sure the library has a page" in refused.value.message
    assert refused.value.unsure is True
    assert "passed on to your teacher" in refused.value.message
    nearest = refused.value.error(request="ask").to_wire()["nearest"]
    assert 1 <= len(nearest) <= 3 and nearest[0]["slug"] == nearest_page(UNKNOWN).slug
    topic = refused.value.topic.to_wire()
    assert topic["slug"] is None and topic["nearest"] == nearest
    assert (Thread.objects.count(), Generation.objects.count(), gpu_waiting(redis_db)) == (0, 0, 0)
    request = TopicRequest.objects.get()
    assert (request.classroom, request.learner, request.question) == (classroom, learner, UNKNOWN)
    assert request.nearest[0] == nearest_page(UNKNOWN).slug


@pytest.mark.parametrize(("question", "lang", "said"), [
    ("How do I fix a flat bicycle tyre?", "en", "The library has no page on that topic yet"),
    ("为什么猫会打呼噜？", "zh", "资料库里还没有关于这个主题的页面"),
    (UNKNOWN, "en", "I am not sure the library has a page on that"),
    ("叉鱼的时候为什么要往看到的鱼下面叉", "zh", "我不确定资料库里有没有讲这个问题的页面"),
])
def test_a_refusal_says_whether_the_library_may_have_the_page_in_the_question_language(redis_db, question, lang,
                                                                                      said):
    """Far from every topic the library has no page; near one but below the threshold the router is unsure,
    and says so rather than that the library lacks it."""
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question=question, session_key="s1", lang=lang)
    assert refused.value.code == "unknown_topic" and refused.value.message.startswith(said)
    assert refused.value.unsure is said.startswith(("I am not sure", "我不确定"))


@pytest.mark.parametrize(("question", "said"), [(UNKNOWN, "noted as a topic to add to the library"),
                                                 ("为什么猫会打呼噜？", "资料库以后要补充的主题")])
def test_a_refusal_outside_a_class_does_not_promise_a_teacher(redis_db, question, said):
    """Only the library's editors see what is asked outside a class: the learner is told just that."""
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question=question, session_key="s1")
    assert refused.value.code == "unknown_topic"
    assert said in refused.value.message and "老师" not in refused.value.message
    assert "teacher" not in refused.value.message
    assert TopicRequest.objects.get().classroom is None


def test_a_nearest_topic_the_learner_picks_is_written_whatever_the_question(
    redis_db, django_capture_on_commit_callbacks
):
    ask(django_capture_on_commit_callbacks, question="Electric circuits", topic="circuits")
    [(_, request)] = gpu_requests(redis_db)
    assert request["topic"] == "circuits"
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="Anything", session_key="s1", topic="no-such-page")
    assert refused.value.code == "bad_field"


def test_a_follow_up_stays_on_the_threads_topic(redis_db, django_capture_on_commit_callbacks):
    first = ask(django_capture_on_commit_callbacks, question="How do tides work?")
    with django_capture_on_commit_callbacks(execute=True):
        generation_finish(generation_id=first.pk, outcome=PageOutcome(status="done", html="<html>tides</html>"))
    # A follow-up whose words alone would route nowhere (or elsewhere) still revises the tides page.
    follow = ask(django_capture_on_commit_callbacks, question="Now add a black hole", thread_id=first.thread_id)
    _, request = gpu_requests(redis_db)[-1]
    assert request["topic"] == "tides" and request["previous_page"] == "<html>tides</html>"
    assert events_of(redis_db, follow)[1]["slug"] == "tides"


def test_an_open_domain_backend_writes_an_unknown_topic_grounded_on_the_nearest_page(
    redis_db, django_capture_on_commit_callbacks, settings
):
    settings.MODEL_BACKEND = OPEN_DOMAIN_TEST_BACKEND
    generation = ask(django_capture_on_commit_callbacks, question=UNKNOWN)
    [(_, request)] = gpu_requests(redis_db)
    assert (request["topic"], request["lang"]) == (nearest_page(UNKNOWN).slug, "en")
    topic = events_of(redis_db, generation)[1]
    assert topic["slug"] is None and topic["nearest"][0]["slug"] == nearest_page(UNKNOWN).slug
    assert TopicRequest.objects.count() == 0


def test_a_page_an_open_domain_model_writes_says_the_question_it_answers_and_its_grounding_only_as_related(
    redis_db, django_capture_on_commit_callbacks, settings
):
    """The router sends "What causes the northern lights?" to the seasons page (score 0.53): the page the model
    writes answers the question, and the seasons lesson is a related lesson, never its subject."""
    settings.MODEL_BACKEND = OPEN_DOMAIN_TEST_BACKEND
    for question, grounding in (("What causes the northern lights?", "seasons-axial-tilt"),
                                (UNKNOWN, nearest_page(UNKNOWN).slug)):
        generation = ask(django_capture_on_commit_callbacks, question=question)
        topic = events_of(redis_db, generation)[1]
        assert topic["answers"] == question and topic["related"]["slug"] == grounding
    settings.MODEL_BACKEND = "clover"  # a library-only backend writes the library's page: no related lesson
    topic = events_of(redis_db, ask(django_capture_on_commit_callbacks, question="Why is the sky blue?"))[1]
    assert "answers" not in topic and "related" not in topic


@pytest.mark.parametrize("question", ["?!?", "🤔🌈", "\u200b\u200d\u2060", "？。！ …"])
def test_a_question_of_only_punctuation_emoji_or_invisible_characters_is_empty(redis_db, question):
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question=question, session_key="s1")
    assert refused.value.code == "empty_question"
    assert (Thread.objects.count(), TopicRequest.objects.count()) == (0, 0)


@pytest.mark.parametrize(("question", "name"), [("Почему небо голубое?", "Russian"), ("하늘은 왜 파래요?", "Korean"),
                                                ("Pourquoi le ciel est-il bleu ?", "French")])
def test_a_question_in_another_language_is_refused_saying_which(redis_db, question, name):
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question=question, session_key="s1")
    assert refused.value.code == "unsupported_language"
    assert name in refused.value.message and "English or Chinese" in refused.value.message
    assert (Thread.objects.count(), TopicRequest.objects.count()) == (0, 0)


def test_zero_width_characters_do_not_reach_the_model(redis_db, django_capture_on_commit_callbacks):
    generation = ask(django_capture_on_commit_callbacks, question="Why is the\u200b sky\u200d blue?")
    assert generation.question == "Why is the sky blue?"


def test_a_follow_up_in_the_other_language_gets_the_library_lesson_in_that_language(
    redis_db, django_capture_on_commit_callbacks, settings
):
    settings.MODEL_BACKEND = "clover"  # it writes the English tides page, not the Chinese one
    first = ask(django_capture_on_commit_callbacks, question="How do tides work?", lang="en")
    assert gpu_requests(redis_db)[0][1]["topic"] == "tides"
    finish(django_capture_on_commit_callbacks, first, status="done", html="<html>tides, in English</html>", stats={})

    in_chinese = ask(django_capture_on_commit_callbacks, question="能用中文讲一下潮汐吗？", thread_id=first.thread_id)
    in_chinese.refresh_from_db()
    assert in_chinese.status == Generation.Status.DONE
    assert in_chinese.stats == {"source": "library", "library_page": "zh-tides"}
    assert [p.html for p in first.thread.pages.order_by("version")] == ["<html>tides, in English</html>",
                                                                          exemplar_html("zh-tides")]
    # Asking again in Chinese would show the page the learner now reads, which cannot show it either: that is
    # said, with the library's other topics near its words, and nothing is added.
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="再讲一遍潮汐吧", session_key="s1", thread_id=first.thread_id)
    assert refused.value.code == "unknown_topic" and "zh-tides" not in [t.slug for t in refused.value.nearest]
    assert first.thread.pages.count() == 2


def test_a_refused_question_does_not_use_up_the_class_daily_allowance(redis_db, django_capture_on_commit_callbacks):
    teacher = get_user_model().objects.create_user("t", password="pw-123456789")
    classroom = Classroom.objects.create(name="7B", teacher=teacher, daily_question_limit=2)
    learner = Learner.objects.create(classroom=classroom, display_name="Mia")
    for _ in range(3):
        with pytest.raises(GenerationRejected) as refused:
            generation_create(question=UNKNOWN, session_key="s1", learner=learner)
        assert refused.value.code == "unknown_topic"
    ask(django_capture_on_commit_callbacks, question="Why is the sky blue?", learner=learner)
    ask(django_capture_on_commit_callbacks, question="How do tides work?", learner=learner)
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="What is inside an atom?", session_key="s1", learner=learner)
    assert refused.value.code == "limit"  # the two answered questions are what the allowance counts


@pytest.mark.parametrize("lang", ["", "fr", "EN"])
def test_a_language_other_than_en_or_zh_is_refused_as_a_bad_field(redis_db, lang):
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="Why is the sky blue?", session_key="s1", lang=lang)
    assert refused.value.code == "bad_field" and "en, zh" in refused.value.message
    assert not Generation.objects.exists()


def test_the_home_page_examples_are_pages_the_model_writes(settings):
    from explainer.library.text import question_language
    from explainer.selectors.backend import backend_writable
    from explainer.selectors.library import library_examples, library_pages

    settings.MODEL_BACKEND = "clover"
    writable = backend_writable()
    assert writable and len(writable) < len(library_pages())
    by_question = {q: p.slug for p in library_pages() for q in (*p.questions_en, *p.questions_zh)}
    for lang in ("en", "zh"):
        examples = library_examples(lang=lang, writable=writable)
        assert len(examples) == 4
        assert all(by_question[q] in writable for q in examples)
        assert all(question_language(q)[0] == lang for q in examples)

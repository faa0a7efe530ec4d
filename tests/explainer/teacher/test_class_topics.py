"""A question's class topic is the library router's choice: near misses get no topic, and no teacher's note."""

from __future__ import annotations

import pytest

from explainer.management.commands.demo_data import DEMO_TOPICS
from explainer.models import Generation, ModerationItem
from explainer.services.classrooms import classroom_create, classroom_update, learner_join, topic_create
from explainer.services.moderation import OFF_TOPIC_MATCH, UNSURE_TOPIC_MATCH, question_check

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture
def demo_class(teacher):
    classroom = classroom_create(teacher=teacher, name="Demo class", languages=["en", "zh"])
    for title, seeds, note in DEMO_TOPICS:
        topic_create(classroom=classroom, title=title, seed_questions=seeds, note_to_model=note)
    return classroom


@pytest.fixture
def mia(demo_class):
    return learner_join(join_code=demo_class.join_code, display_name="Mia")


def check(classroom, learner, question, **kw):
    return question_check(classroom=classroom, learner=learner, question=question,
                          lang="zh" if any("\u4e00" <= c <= "\u9fff" for c in question) else "en", **kw)


@pytest.mark.parametrize("question", [
    "Why does a spoon in water look bent?", "为什么水里的勺子看起来是弯的？",
    "Why does ice float on water?", "冰为什么能浮在水面上？",
    "How do fish breathe under water?", "鱼在水里怎么呼吸？",
    "Why do we need to drink water every day?", "海水为什么是咸的？",
])
def test_a_water_question_beside_photosynthesis_is_filed_under_no_topic_and_gets_no_note(demo_class, mia, question):
    verdict = check(demo_class, mia, question)
    assert verdict.allowed and (verdict.topic_id, verdict.topic_note, verdict.topic_exemplar) == (None, None, None)


@pytest.mark.parametrize(("question", "title"), [
    ("Why do plants need water to make sugar?", "Photosynthesis"),
    ("Why do plants give off oxygen?", "Photosynthesis"),
    ("Why do two north poles push each other away?", "Magnetism"),
    ("为什么两块磁铁会互相排斥？", "Magnetism"),
    ("Which planet is the biggest?", "The solar system"),
])
def test_a_question_on_a_class_topic_is_filed_under_it_with_the_teachers_note(demo_class, mia, question, title):
    topic = demo_class.topics.get(title=title)
    verdict = check(demo_class, mia, question)
    assert (verdict.topic_id, verdict.topic_note) == (topic.pk, topic.note_to_model)


def test_where_the_class_has_a_refraction_topic_the_bent_spoon_is_filed_under_it_or_offered_it_first(demo_class, mia):
    classroom_update(classroom=demo_class, topic_space_enabled=True)
    light = topic_create(classroom=demo_class, title="Light and refraction",
                         seed_questions=["Why does light bend when it goes into water?", "光进入水里为什么会弯折？"],
                         note_to_model="Rays of light bending at the surface between air and water or glass.")
    assert check(demo_class, mia, "Why does a spoon in water look bent?").topic_id == light.pk
    chinese = check(demo_class, mia, "为什么水里的勺子看起来是弯的？")  # no word in common with the seeds
    assert chinese.topic_id == light.pk or chinese.nearest[0].title == "Light and refraction"
    light.exemplar = "refraction"  # the library's page on it, pinned: the topic speaks with its questions too
    light.save()
    for question in ("Why does a spoon in water look bent?", "为什么水里的勺子看起来是弯的？"):
        assert check(demo_class, mia, question).topic_id == light.pk


def test_a_library_page_pinned_to_a_topic_widens_what_the_topic_takes_in(demo_class, mia):
    question = "Why does Saturn have rings?"  # no seed names Saturn or rings
    assert check(demo_class, mia, question).topic_id is None
    solar = demo_class.topics.get(title="The solar system")
    solar.exemplar = "solar-system"
    solar.save()
    verdict = check(demo_class, mia, question)
    assert (verdict.topic_id, verdict.topic_exemplar) == (solar.pk, "solar-system")


def test_with_the_topic_space_on_a_question_far_from_every_topic_is_refused_and_listed(demo_class, mia):
    classroom_update(classroom=demo_class, topic_space_enabled=True)
    verdict = check(demo_class, mia, "Why does a spoon in water look bent?")
    assert (verdict.allowed, verdict.code, verdict.unsure, verdict.nearest) == (False, "off_topic", False, ())
    assert "Photosynthesis" in verdict.message
    item = ModerationItem.objects.get()
    assert (item.text, item.matched, item.source, item.learner) == (
        "Why does a spoon in water look bent?", OFF_TOPIC_MATCH, "topics", mia)


def test_with_the_topic_space_on_an_unsure_question_is_offered_the_nearest_topics_and_may_pick_one(demo_class, mia):
    classroom_update(classroom=demo_class, topic_space_enabled=True)
    solar = demo_class.topics.get(title="The solar system")
    refused = check(demo_class, mia, "Why does Saturn have rings?")
    assert (refused.allowed, refused.code, refused.unsure) == (False, "off_topic", True)
    assert refused.nearest[0].title == "The solar system" and "not sure" in refused.message
    assert ModerationItem.objects.get().matched == UNSURE_TOPIC_MATCH
    picked = check(demo_class, mia, "Why does Saturn have rings?", picked_topic=refused.nearest[0].slug)
    assert (picked.allowed, picked.topic_id, picked.topic_note) == (True, solar.pk, solar.note_to_model)


def test_a_picked_topic_of_another_class_is_not_taken(demo_class, mia, teacher):
    elsewhere = topic_create(classroom=classroom_create(teacher=teacher, name="Other"), title="Football")
    verdict = check(demo_class, mia, "Why does a spoon in water look bent?", picked_topic=f"class-topic:{elsewhere.pk}")
    assert verdict.allowed and verdict.topic_id is None


def test_a_follow_up_is_never_refused_for_topic_and_carries_no_topic_of_its_own(demo_class, mia):
    classroom_update(classroom=demo_class, topic_space_enabled=True)
    verdict = check(demo_class, mia, "Make the spoon bigger", kind=Generation.Kind.FOLLOW_UP)
    assert verdict.allowed and verdict.topic_id is None and not ModerationItem.objects.exists()


def test_a_class_without_topics_refuses_nothing_for_topic(teacher):
    bare = classroom_create(teacher=teacher, name="Bare", languages=[])
    classroom_update(classroom=bare, topic_space_enabled=True)
    assert question_check(classroom=bare, learner=None, question="Who won the football world cup?").allowed


def test_an_unsure_refusal_offers_the_class_topics_to_the_learner_and_a_pick_asks_on_that_topic(demo_class, mia,
                                                                                                redis_db):
    from explainer.models import Learner, Thread
    from explainer.services.asking import generation_create
    from explainer.services.rejection import GenerationRejected

    classroom_update(classroom=demo_class, topic_space_enabled=True)
    mia = Learner.objects.select_related("classroom").get(pk=mia.pk)  # as the next request reads it
    solar = demo_class.topics.get(title="The solar system")
    with pytest.raises(GenerationRejected) as refused:
        generation_create(question="Why does Saturn have rings?", session_key="s1", learner=mia)
    error = refused.value.error(request="ask").to_wire()
    assert (error["code"], error["unsure"]) == ("off_topic", True)
    assert error["nearest"][0] == {"slug": f"class-topic:{solar.pk}", "title": "The solar system"}
    generation = generation_create(question="Why does Saturn have rings?", session_key="s1", learner=mia,
                                   topic=error["nearest"][0]["slug"])
    assert Thread.objects.get(pk=generation.thread_id).topic_id == solar.pk

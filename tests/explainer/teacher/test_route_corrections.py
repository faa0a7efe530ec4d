"""The teacher's word on the router: "wrong page" / "right page" in the review gallery, a requested topic answered
with a library page, and the rules a learner's pick must meet before it teaches the router."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from explainer.models import Generation, LearnedRoute, TopicRequest
from explainer.selectors.learned_routes import learned_routes
from explainer.selectors.library import question_route
from explainer.services.classrooms import classroom_create, learner_join
from explainer.services.route_learning import pick_learn

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

UNSURE = "why won't wet wood catch fire at camp"  # refused as unsure, combustion offered first


@pytest.fixture
def signed_in(client, teacher):
    client.force_login(teacher)
    return client


@pytest.fixture
def routed_page(classroom, learner, make_page):
    """A learner's question the router answered with the combustion page."""
    page = make_page(classroom=classroom, learner=learner, question=UNSURE)
    page.thread.topic_slug = "combustion"
    page.thread.save()
    return page


def test_the_gallery_offers_wrong_and_right_page_on_a_routed_question_only(signed_in, classroom, learner, routed_page,
                                                                           make_page):
    unrouted = make_page(classroom=classroom, learner=learner, question="Something else")
    body = signed_in.get(reverse("teacher:review", args=[classroom.pk])).content.decode()
    tile = body.split(f'data-page="{routed_page.pk}"')[1].split("</li>")[0]
    assert "Library page: What a fire needs" in tile
    assert reverse("teacher:route-action", args=[routed_page.pk, "wrong-page"]) in tile
    assert reverse("teacher:route-action", args=[routed_page.pk, "right-page"]) in tile
    other = body.split(f'data-page="{unrouted.pk}"')[1].split("</li>")[0]
    assert "route-wrong" not in other


def test_right_page_routes_the_question_for_everyone_at_once(signed_in, routed_page):
    assert not question_route(question=UNSURE, lang="en").inside
    response = signed_in.post(reverse("teacher:route-action", args=[routed_page.pk, "right-page"]))
    assert response.status_code == 302
    route = LearnedRoute.objects.get()
    assert (route.kind, route.source, route.everyone, route.slug) == ("variant", "teacher", True, "combustion")
    assert question_route(question=UNSURE, lang="en").page.slug == "combustion"  # outside classes too


def test_another_teacher_cannot_correct_a_class_s_routes(client, other_teacher, routed_page):
    client.force_login(other_teacher)
    response = client.post(reverse("teacher:route-action", args=[routed_page.pk, "wrong-page"]))
    assert response.status_code == 404 and not LearnedRoute.objects.exists()


def test_a_requested_topic_pointed_at_a_page_is_answered_by_it(signed_in, classroom, learner):
    TopicRequest.objects.create(classroom=classroom, learner=learner, question=UNSURE, normalised=UNSURE, lang="en",
                                nearest=["combustion"], unsure=True)
    page = signed_in.get(reverse("teacher:requested-topics-class", args=[classroom.pk])).content.decode()
    assert 'class="inline request-point"' in page and 'value="combustion"' in page
    response = signed_in.post(reverse("teacher:request-point"), {
        "classroom": classroom.pk, "question": UNSURE, "lang": "en", "slug": "combustion"})
    assert response.status_code == 302
    page = signed_in.get(reverse("teacher:requested-topics-class", args=[classroom.pk]))
    assert [row["question"] for row in page.context["answered"]] == [UNSURE]
    assert page.context["answered"][0]["answered_by"]["slug"] == "combustion"


def test_only_a_library_editor_answers_questions_asked_outside_classes(signed_in):
    response = signed_in.post(reverse("teacher:request-point"),
                              {"classroom": "", "question": UNSURE, "lang": "en", "slug": "combustion"})
    assert response.status_code == 404 and not LearnedRoute.objects.exists()


def test_a_page_the_library_lacks_is_refused(signed_in, classroom):
    signed_in.post(reverse("teacher:request-point"),
                   {"classroom": classroom.pk, "question": UNSURE, "lang": "en", "slug": "no-such-page"})
    assert not LearnedRoute.objects.exists()


def _pick(classroom, learner, slug="combustion", *, counts=True):
    return LearnedRoute.objects.create(
        kind="variant", source="pick", classroom=classroom, question=UNSURE, normalised=UNSURE, slug=slug,
        learner=learner, counts_from=timezone.now() - timedelta(seconds=1 if counts else -600))


def test_a_pick_holds_for_everyone_once_enough_learners_in_any_class_agree(teacher, settings):
    settings.ROUTE_LEARN_AGREE = 3
    classes = [classroom_create(teacher=teacher, name=f"Class {n}") for n in range(3)]
    learners = [learner_join(join_code=c.join_code, display_name="Sam") for c in classes]
    _pick(classes[0], learners[0])
    _pick(classes[1], learners[1])
    assert learned_routes(classroom=classes[0]).variants == (("combustion", UNSURE),)
    assert learned_routes(classroom=None).variants == ()
    _pick(classes[2], learners[2], counts=False)  # still waiting to see whether the learner stays
    assert learned_routes(classroom=None).variants == ()
    LearnedRoute.objects.filter(learner=learners[2]).update(counts_from=timezone.now())
    assert learned_routes(classroom=None).variants == (("combustion", UNSURE),)


def test_a_learner_s_picks_are_bounded_a_day_and_need_their_own_unsure_refusal(classroom, learner, settings):
    settings.ROUTE_LEARN_PER_DAY = 2
    thread_generation = Generation.objects.create(
        thread=learner.threads.create(classroom=classroom, learner=learner), learner=learner, classroom=classroom,
        question="Combustion")
    TopicRequest.objects.create(classroom=classroom, learner=learner, question="How do fridges work?",
                                normalised="how do fridges work", nearest=["heat-transfer"], unsure=False)
    assert pick_learn(generation=thread_generation, picked="heat-transfer", session_key="", learner=learner) is None
    TopicRequest.objects.create(classroom=classroom, learner=learner, question=UNSURE, normalised=UNSURE,
                                nearest=["combustion", "fire-triangle"], unsure=True)
    assert pick_learn(generation=thread_generation, picked="photosynthesis", session_key="", learner=learner) is None
    assert pick_learn(generation=thread_generation, picked="combustion", session_key="", learner=learner)
    assert pick_learn(generation=thread_generation, picked="combustion", session_key="", learner=learner)
    assert pick_learn(generation=thread_generation, picked="combustion", session_key="", learner=learner) is None
    assert LearnedRoute.objects.count() == 2


def test_a_library_editor_corrects_questions_asked_outside_classes_for_everyone(client, django_user_model, make_page,
                                                                               classroom):
    editor = django_user_model.objects.create_superuser("editor", password="pw-editor-123")
    client.force_login(editor)
    page = make_page(classroom=None, question="Why does a compass needle point north?")
    page.thread.topic_slug = "magnetism"
    page.thread.save()
    listed = client.get(reverse("teacher:requested-topics")).content.decode()
    assert 'id="routed-outside-classes"' in listed and f'data-page="{page.pk}"' in listed
    client.post(reverse("teacher:route-action", args=[page.pk, "wrong-page"]))
    route = LearnedRoute.objects.get()
    assert (route.kind, route.everyone, route.classroom) == ("wrong", True, None)
    for where in (None, classroom):  # outside classes, and in a class
        assert not question_route(question="Why does a compass needle point north?", lang="en",
                                  classroom=where).inside

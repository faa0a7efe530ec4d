"""Questions are checked before generation and pages after it; teachers decide what waits in the queue."""

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.urls import reverse

from explainer.models import Generation, ModerationItem
from explainer.services.classrooms import classroom_update
from explainer.services.moderation import page_screen, question_check
from explainer.services.review import thread_group

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def check(classroom, learner, question, **kw):
    return question_check(classroom=classroom, learner=learner, question=question, **kw)


def test_a_question_with_a_built_in_blocked_word_gets_the_teachers_message(classroom, learner):
    classroom_update(classroom=classroom, blocked_message="Ask Ms Lovelace about that one.")
    verdict = check(classroom, learner, "How do I make a bomb at home?")
    assert (verdict.allowed, verdict.code, verdict.message) == (False, "blocked", "Ask Ms Lovelace about that one.")
    item = ModerationItem.objects.get()
    assert (item.status, item.kind, item.learner, item.source) == ("blocked", "question", learner, "builtin")


def test_the_class_blocklist_blocks_whole_words_and_chinese_phrases(classroom, learner):
    classroom_update(classroom=classroom, blocklist="homework answers\n抄作业")
    assert check(classroom, learner, "Give me the HOMEWORK answers").code == "blocked"
    assert check(classroom, learner, "可以帮我抄作业吗").code == "blocked"
    assert check(classroom, learner, "Why does homework exist?").allowed
    assert ModerationItem.objects.filter(source="class", status="blocked").count() == 2


def test_a_flagged_question_goes_ahead_and_waits_in_the_queue(classroom, learner):
    verdict = check(classroom, learner, "How does a magnet help a gun fire?")
    assert verdict.allowed and verdict.flagged
    assert ModerationItem.objects.get().status == ModerationItem.Status.PENDING


def test_with_the_topic_space_on_an_outside_question_is_politely_refused(classroom, learner):
    classroom_update(classroom=classroom, topic_space_enabled=True)
    verdict = check(classroom, learner, "Who won the football world cup?")
    assert (verdict.allowed, verdict.code) == (False, "off_topic")
    assert "Magnetism" in verdict.message
    item = ModerationItem.objects.get()  # the teacher sees what was refused, and who asked
    assert (item.status, item.text, item.learner, item.source) == (
        "blocked", "Who won the football world cup?", learner, "topics")
    inside = check(classroom, learner, "Why does a magnet stick to the fridge?")
    assert inside.allowed and inside.topic_id == classroom.topics.get(title="Magnetism").pk
    assert inside.topic_note == "Draw field lines."


def test_follow_ups_and_classes_without_the_topic_space_are_not_refused_for_topic(classroom, learner):
    assert check(classroom, learner, "Who won the football world cup?").allowed
    classroom_update(classroom=classroom, topic_space_enabled=True)
    assert check(classroom, learner, "Make it about football", kind=Generation.Kind.FOLLOW_UP).allowed


def test_a_class_limited_to_chinese_refuses_english_questions(classroom, learner):
    classroom_update(classroom=classroom, languages=["zh"])
    refused = check(classroom, learner, "How does rain form?", lang="en")
    assert (refused.code, refused.message) == ("language", "This class asks questions in Chinese.")
    assert check(classroom, learner, "雨是怎么形成的？", lang="zh").allowed


def test_a_chinese_question_is_refused_in_chinese(classroom, learner):
    classroom_update(classroom=classroom, languages=["en"])
    assert check(classroom, learner, "磁铁为什么能吸铁？", lang="zh").message == "这个班级用英文提问。"
    classroom_update(classroom=classroom, languages=[], topic_space_enabled=True)
    refused = check(classroom, learner, "地震是怎么发生的？", lang="zh")
    assert refused.code == "off_topic" and refused.message.startswith("这个问题很好，不过这个班级正在探索：")
    assert "Magnetism" in refused.message


def test_a_page_with_a_blocked_word_is_hidden_at_once_and_queued(classroom, learner, make_page):
    page = make_page(classroom=classroom, learner=learner, html="<p>Magnets</p><script>let sex=1</script><p>porn</p>")
    item = page_screen(page=page)
    page.refresh_from_db()
    assert page.hidden and item.status == "pending" and item.matched == "porn"


def test_a_clean_page_passes_the_screen(classroom, learner, make_page):
    page = make_page(classroom=classroom, learner=learner, html="<p>Field lines loop from north to south.</p>")
    assert page_screen(page=page) is None
    page.refresh_from_db()
    assert not page.hidden


def test_hiding_a_queued_page_hides_it_and_tells_open_learner_views(
    client, classroom, learner, teacher, make_page, django_capture_on_commit_callbacks
):
    page = make_page(classroom=classroom, learner=learner, html="<p>How a gun recoils</p>")
    item = page_screen(page=page)
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(thread_group(page.thread_id), channel)
    client.force_login(teacher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("teacher:moderation-decide", args=[item.pk]), {"decision": "hide"})
    assert response.status_code == 302
    page.refresh_from_db()
    item.refresh_from_db()
    assert page.hidden and item.status == "hidden" and item.decided_by == teacher
    message = async_to_sync(layer.receive)(channel)
    assert message == {"type": "page.hidden",
                       "event": {"type": "page_hidden", "page": page.pk, "thread": str(page.thread_id), "version": 1}}
    async_to_sync(layer.group_discard)(thread_group(page.thread_id), channel)


def test_approving_a_held_page_shows_it_again(client, classroom, learner, teacher, make_page):
    page = make_page(classroom=classroom, learner=learner, html="<p>suicide</p>")
    item = page_screen(page=page)
    page.refresh_from_db()
    assert page.hidden
    client.force_login(teacher)
    client.post(reverse("teacher:moderation-decide", args=[item.pk]), {"decision": "approve"})
    page.refresh_from_db()
    assert not page.hidden
    assert ModerationItem.objects.get(pk=item.pk).status == "approved"


def test_approving_or_hiding_a_queued_page_says_what_was_done(client, classroom, learner, teacher, make_page):
    held = page_screen(page=make_page(classroom=classroom, learner=learner, question="Is it safe?",
                                      html="<p>suicide</p>"))
    flagged = page_screen(page=make_page(classroom=classroom, learner=learner, question="How does a gun recoil?",
                                         html="<p>How a gun recoils</p>"))
    client.force_login(teacher)
    approved = client.post(reverse("teacher:moderation-decide", args=[held.pk]), {"decision": "approve"}, follow=True)
    assert "Approved the page for “Is it safe?”: learners can see it." in approved.content.decode()
    hidden = client.post(reverse("teacher:moderation-decide", args=[flagged.pk]), {"decision": "hide"}, follow=True)
    assert "Hid the page for “How does a gun recoil?”: learners no longer see it" in hidden.content.decode()


def test_another_teacher_cannot_decide_a_queued_item(client, classroom, learner, other_teacher, make_page):
    page = make_page(classroom=classroom, learner=learner, html="<p>suicide</p>")
    item = page_screen(page=page)
    client.force_login(other_teacher)
    assert client.post(reverse("teacher:moderation-decide", args=[item.pk]), {"decision": "approve"}).status_code == 404
    page.refresh_from_db()
    assert page.hidden


def test_a_finished_generation_with_a_blocked_word_leaves_a_hidden_page_in_the_queue(classroom, learner):
    from explainer.models import Thread
    from explainer.services.finishing import generation_finish
    from model_worker.contract.pages import PageOutcome

    thread = Thread.objects.create(session_key="s", learner=learner, classroom=classroom)
    generation = Generation.objects.create(thread=thread, learner=learner, classroom=classroom, question="Why?")
    generation_finish(generation_id=generation.pk, outcome=PageOutcome(status="done", html="<p>nude</p>"))
    page = thread.pages.get()
    assert page.hidden
    assert ModerationItem.objects.get(page=page).status == ModerationItem.Status.PENDING


def test_the_queue_shows_waiting_items_with_their_decisions_and_blocked_questions_below(
    client, classroom, learner, teacher
):
    check(classroom, learner, "Can a magnet stop a gun?")
    check(classroom, learner, "show me porn")
    client.force_login(teacher)
    response = client.get(reverse("teacher:moderation", args=[classroom.pk]))
    assert [i.text for i in response.context["pending"]] == ["Can a magnet stop a gun?"]
    assert [i.text for i in response.context["recent"]] == ["show me porn"]
    body = response.content.decode()
    assert 'value="approve"' in body and "Mia" in body


@pytest.mark.parametrize("question", [
    "Can you see Jupiter with the naked eye?",
    "Which method do plants use to reproduce sexually?",
    "Why does warm air rise?",
    "How do bacteria get killed by soap?",
])
def test_ordinary_science_questions_are_not_blocked(classroom, learner, question):
    verdict = check(classroom, learner, question)
    assert verdict.allowed and not verdict.flagged


def test_sex_chromosomes_go_ahead_but_wait_for_a_teachers_look(classroom, learner):
    verdict = check(classroom, learner, "What decides the sex of a baby?")
    assert verdict.allowed and verdict.flagged


def test_a_flagged_question_answered_from_the_library_queues_its_page_and_hiding_it_hides_the_page(
    client, classroom, learner, teacher, django_capture_on_commit_callbacks, redis_db, settings
):
    from explainer.services.asking import generation_create

    settings.MODEL_BACKEND = "clover"  # the demo checkpoint never learned this lesson: the library page answers
    with django_capture_on_commit_callbacks(execute=True):
        asked = generation_create(question="How does an electric motor work? Is it used in war?",
                                  session_key="s", learner=learner)
    asked.refresh_from_db()
    page = asked.page
    assert asked.stats.get("source") == "library" and not page.hidden
    item = ModerationItem.objects.get(page=page)
    assert item.status == ModerationItem.Status.PENDING
    client.force_login(teacher)
    client.post(reverse("teacher:moderation-decide", args=[item.pk]), {"decision": "hide"})
    page.refresh_from_db()
    assert page.hidden


def test_a_featured_page_with_a_flagged_word_waits_in_the_queue_once_however_many_learners_it_answers(
    client, classroom, learner, teacher, make_page, monkeypatch, django_capture_on_commit_callbacks
):
    from explainer.celery import app
    from explainer.services.asking import generation_create
    from explainer.services.classrooms import learner_join
    from explainer.services.review import page_set_featured

    monkeypatch.setattr(app, "send_task", lambda name, **kw: None)
    featured = make_page(classroom=classroom, learner=learner, html="<p>A magnet in a gun sight</p>")
    page_set_featured(page=featured, featured=True)
    askers = [learner, *(learner_join(join_code=classroom.join_code, display_name=n) for n in ("Ben", "Cai"))]

    def ask(who):
        with django_capture_on_commit_callbacks(execute=True):
            return generation_create(question="How does a magnet attract iron?", session_key=f"k{who.pk}",
                                     learner=who)

    answers = [ask(who) for who in askers]
    assert all(a.stats == {"featured_page": featured.pk} for a in answers)
    items = ModerationItem.objects.filter(kind=ModerationItem.Kind.PAGE)
    assert [(i.status, i.matched) for i in items] == [("pending", "gun")]
    client.force_login(teacher)
    client.post(reverse("teacher:moderation-decide", args=[items.get().pk]), {"decision": "approve"})
    ask(askers[0])
    assert [i.status for i in items.all()] == ["approved"]  # kept once, it is not asked about again


def test_screening_the_same_page_twice_queues_it_once(classroom, learner, make_page):
    page = make_page(classroom=classroom, learner=learner, html="<p>How a gun recoils</p>")
    first, second = page_screen(page=page), page_screen(page=page)
    assert first == second and ModerationItem.objects.count() == 1


def test_a_flagged_question_is_marked_reviewed_and_hide_is_not_offered_for_it(client, classroom, learner, teacher):
    """Hiding a question item used to record "hidden" while the page it led to stayed with the learners."""
    check(classroom, learner, "How does a magnet help a gun fire?")
    item = ModerationItem.objects.get()
    client.force_login(teacher)
    queue = client.get(reverse("teacher:moderation", args=[classroom.pk])).content.decode()
    row = queue.split('id="queue"')[1].split("</table>")[0]
    assert "Reviewed" in row and 'value="hide"' not in row

    response = client.post(reverse("teacher:moderation-decide", args=[item.pk]), {"decision": "hide"}, follow=True)
    assert "hide the page item it led to" in response.content.decode()
    item.refresh_from_db()
    assert item.status == ModerationItem.Status.PENDING  # nothing recorded that did not happen
    reviewed = client.post(reverse("teacher:moderation-decide", args=[item.pk]), {"decision": "approve"}, follow=True)
    assert "Marked the question “How does a magnet help a gun fire?” reviewed." in reviewed.content.decode()
    item.refresh_from_db()
    assert item.status == ModerationItem.Status.APPROVED

"""Question limits hold per session, per address and per learner across leave/join, even under concurrency;
/join/ and the teacher sign-in are throttled."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.urls import reverse

from explainer.services import rate_limits
from explainer.services.asking import generation_create
from explainer.services.classrooms import classroom_update, learner_join
from explainer.services.rejection import GenerationRejected

pytestmark = pytest.mark.django_db


def ask(session_key: str, *, client_id=None, ip="10.0.0.1", learner=None, question="Why is the sky blue?"):
    client = rate_limits.Client(session_key=session_key, client_id=client_id, ip=ip)
    return generation_create(question=question, session_key=session_key, learner=learner, client=client)


def refused_code(**kwargs) -> str:
    with pytest.raises(GenerationRejected) as caught:
        ask(**kwargs)
    return caught.value.code


def test_an_anonymous_browser_is_limited_per_hour(settings):
    settings.ANON_QUESTIONS_PER_SESSION_HOUR = 2
    ask("s1", client_id="browser-1")
    ask("s1", client_id="browser-1")
    assert refused_code(session_key="s1", client_id="browser-1") == "rate_limited"
    ask("s2", client_id="browser-2")  # another browser still may


def test_new_sessions_from_one_address_share_its_limit(settings):
    settings.ANON_QUESTIONS_PER_IP_HOUR = 3
    for n in range(3):
        ask(f"fresh-{n}", client_id=f"browser-{n}", ip="10.9.9.9")
    assert refused_code(session_key="fresh-9", client_id="browser-9", ip="10.9.9.9") == "rate_limited"
    ask("elsewhere", client_id="browser-x", ip="10.1.1.1")


def test_a_class_behind_one_school_address_is_limited_per_browser_not_by_the_address():
    # The shipped limits: thirty anonymous browsers behind one address each get their own whole hour's questions.
    def browser(n):
        return rate_limits.Client(session_key=f"s{n}", client_id=f"browser-{n}", ip="10.7.7.7")

    for n in range(30):
        for _ in range(settings.ANON_QUESTIONS_PER_SESSION_HOUR):
            rate_limits.question_count(client=browser(n), learner=None)
    with pytest.raises(rate_limits.RateLimited):  # ...and then each is stopped by its own limit
        rate_limits.question_count(client=browser(0), learner=None)


def test_a_class_s_learners_behind_one_address_are_counted_by_the_class_allowance_not_the_address(
    settings, classroom
):
    settings.ANON_QUESTIONS_PER_IP_HOUR = 1
    classroom_update(classroom=classroom, daily_question_limit=2)
    learners = [learner_join(join_code=classroom.join_code, display_name=name) for name in ("Mia", "Leo")]
    for learner in learners:
        for _ in range(2):
            ask(f"s-{learner.pk}", client_id=f"browser-{learner.pk}", ip="10.7.7.7", learner=learner)
    mia = learners[0]
    assert refused_code(session_key=f"s-{mia.pk}", client_id=f"browser-{mia.pk}", ip="10.7.7.7",
                        learner=mia) == "limit"


@pytest.mark.parametrize(("refusal", "question"), [
    ("language", "天空为什么是蓝色的？"),
    ("off_topic", "How do volcanoes erupt?"),
])
def test_a_question_the_class_s_rules_refuse_does_not_use_up_the_daily_allowance(learner, refusal, question):
    classroom_update(classroom=learner.classroom, daily_question_limit=1, languages=["en"], topic_space_enabled=True)
    for _ in range(3):
        assert refused_code(session_key="s", client_id="b", learner=learner, question=question) == refusal
    ask("s", client_id="b", learner=learner, question="How does a magnet attract iron?")  # the one answer today
    assert refused_code(session_key="s", client_id="b", learner=learner,
                        question="How does a magnet attract iron?") == "limit"


def test_a_blocked_question_still_counts_toward_the_daily_allowance(learner):
    classroom_update(classroom=learner.classroom, daily_question_limit=1, blocklist="dragons")
    assert refused_code(session_key="s", client_id="b", learner=learner, question="Tell me about dragons") == "blocked"
    assert refused_code(session_key="s", client_id="b", learner=learner,
                        question="How does a magnet attract iron?") == "limit"


def test_leaving_and_rejoining_under_a_new_name_does_not_reset_the_class_limit(client, classroom):
    classroom_update(classroom=classroom, daily_question_limit=2)

    def join(name):
        client.post(reverse("join"), {"join_code": classroom.join_code, "display_name": name})
        return classroom.learners.get(display_name=name)

    def ask_as(learner):
        session = client.session
        return ask(session.session_key, client_id=session["client_id"], learner=learner)

    mia = join("Mia")
    ask_as(mia)
    ask_as(mia)
    client.post(reverse("join-leave"))
    mia_again = join("Mia 2")
    assert mia_again.pk != mia.pk  # a new membership row...
    with pytest.raises(GenerationRejected) as caught:
        ask_as(mia_again)
    assert caught.value.code == "limit"  # ...but the same learner, and the same count


def test_a_class_without_its_own_limit_still_has_the_site_wide_daily_one(settings, classroom, learner):
    settings.LEARNER_DAILY_QUESTIONS = 1
    ask("s", client_id="b", learner=learner)
    assert refused_code(session_key="s", client_id="b", learner=learner) == "limit"


def test_concurrent_questions_never_get_past_the_limit(settings):
    settings.ANON_QUESTIONS_PER_SESSION_HOUR = 5
    settings.ANON_QUESTIONS_PER_IP_HOUR = 0
    client = rate_limits.Client(session_key="s", client_id="racer")

    def one(_):
        try:
            rate_limits.question_count(client=client, learner=None)
            return True
        except rate_limits.RateLimited:
            return False

    with ThreadPoolExecutor(max_workers=16) as pool:
        allowed = sum(pool.map(one, range(40)))
    assert allowed == 5


def test_join_code_guessing_is_throttled_per_address(client, settings, classroom):
    settings.JOIN_RATE = "3/m"
    for n in range(3):
        response = client.post(reverse("join"), {"join_code": f"WRONG{n}", "display_name": "Eve"})
        assert response.status_code == 200
    response = client.post(reverse("join"), {"join_code": classroom.join_code, "display_name": "Eve"})
    assert response.status_code == 429
    assert "Too many tries" in response.content.decode()
    assert not classroom.learners.filter(display_name="Eve").exists()  # even the right code waits


def test_teacher_sign_in_locks_out_after_repeated_failures(client, settings, teacher):
    settings.AXES_FAILURE_LIMIT = 3
    login = reverse("teacher:login")
    for _ in range(3):
        client.post(login, {"username": teacher.username, "password": "wrong"})
    response = client.post(login, {"username": teacher.username, "password": "pw-ada-123"})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_forged_forwarded_address_does_not_dodge_the_sign_in_lockout(client, settings, teacher):
    settings.AXES_FAILURE_LIMIT = 2
    login = reverse("teacher:login")
    for n in range(2):
        client.post(login, {"username": teacher.username, "password": "wrong"}, HTTP_X_FORWARDED_FOR=f"81.2.69.{n + 1}")
    response = client.post(login, {"username": teacher.username, "password": "pw-ada-123"},
                           HTTP_X_FORWARDED_FOR="81.2.69.99")
    assert response.status_code == 429

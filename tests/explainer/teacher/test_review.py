"""The review gallery, page actions, featured pages and usage reports of a class."""

import csv
import html
import io
import re

import pytest
from django.test import Client
from django.urls import reverse

from explainer.models import Generation, RenderCheck
from explainer.selectors.review import featured_page_for
from explainer.services.classrooms import learner_join

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture
def signed_in(client, teacher):
    client.force_login(teacher)
    return client


def served_by_preview(body: str) -> str:
    """What a stranger's browser gets from the preview's signed link (signatures carry a timestamp)."""
    src = html.unescape(re.search(r'<iframe class="preview"[^>]*\ssrc="([^"]+)"', body).group(1))
    return Client().get(src).content.decode()


def gallery(client, classroom, **params):
    response = client.get(reverse("teacher:review", args=[classroom.pk]), params)
    assert response.status_code == 200
    return {p.pk for p in response.context["pages"]}


def test_the_gallery_filters_by_check_result_learner_and_topic(signed_in, classroom, learner, make_page):
    magnetism = classroom.topics.get(title="Magnetism")
    leo = learner_join(join_code=classroom.join_code, display_name="Leo")
    passed = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.PASSED, topic=magnetism)
    failed = make_page(classroom=classroom, learner=leo, check=RenderCheck.Status.FAILED, question="How does rain form?")
    unchecked = make_page(classroom=classroom, learner=leo, question="Why do clouds float?")
    assert gallery(signed_in, classroom) == {passed.pk, failed.pk, unchecked.pk}
    assert gallery(signed_in, classroom, check="failed") == {failed.pk}
    assert gallery(signed_in, classroom, check="none") == {unchecked.pk}
    assert gallery(signed_in, classroom, learner=leo.pk) == {failed.pk, unchecked.pk}
    assert gallery(signed_in, classroom, topic=magnetism.pk) == {passed.pk}
    # A hand-edited link filters nothing rather than failing with a 500.
    for bad in ({"topic": "abc"}, {"learner": "xyz"}, {"topic": "1.5"}, {"learner": "٣"}):
        assert gallery(signed_in, classroom, **bad) == {passed.pk, failed.pk, unchecked.pk}


def test_the_gallery_uses_the_latest_check_of_a_page(signed_in, classroom, make_page):
    page = make_page(classroom=classroom, check=RenderCheck.Status.FAILED)
    RenderCheck.objects.create(page=page, status=RenderCheck.Status.PASSED)
    assert gallery(signed_in, classroom, check="passed") == {page.pk}
    assert gallery(signed_in, classroom, check="failed") == set()


def test_a_page_thumbnail_is_served_as_png(signed_in, classroom, make_page):
    page = make_page(classroom=classroom, check=RenderCheck.Status.PASSED)
    response = signed_in.get(reverse("teacher:page-thumbnail", args=[page.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response.content.startswith(b"\x89PNG")


def test_every_version_of_a_page_can_be_opened(signed_in, classroom, learner, make_page):
    first = make_page(classroom=classroom, learner=learner, html="<p>first draft</p>")
    second = make_page(classroom=classroom, learner=learner, thread=first.thread, version=2, html="<p>revised</p>",
                       question="Add the Earth", kind=Generation.Kind.FOLLOW_UP)
    body = signed_in.get(reverse("teacher:page", args=[first.pk])).content.decode()
    assert served_by_preview(body) == "<p>first draft</p>"
    assert reverse("teacher:page", args=[second.pk]) in body
    body = signed_in.get(reverse("teacher:page", args=[second.pk])).content.decode()
    assert served_by_preview(body) == "<p>revised</p>"


def test_a_hidden_page_on_another_origin_is_previewed_inline(signed_in, classroom, make_page, settings):
    settings.PAGE_ORIGIN = "https://pages.example.org"
    page = make_page(classroom=classroom, html="<p>held back</p>")
    page.hidden = True
    page.save()
    body = signed_in.get(reverse("teacher:page", args=[page.pk])).content.decode()
    assert 'srcdoc="&lt;p&gt;held back&lt;/p&gt;"' in body


def test_a_featured_page_answers_the_same_question_in_that_class_only(signed_in, classroom, other_classroom, make_page):
    page = make_page(classroom=classroom, question="How does a magnet attract iron?")
    assert featured_page_for(classroom=classroom, question="how does a magnet  attract iron") is None
    signed_in.post(reverse("teacher:page-action", args=[page.pk, "feature"]))
    assert featured_page_for(classroom=classroom, question="how does a magnet  attract iron") == page
    assert featured_page_for(classroom=classroom, question="How does a magnet attract steel?") is None
    assert featured_page_for(classroom=other_classroom, question="How does a magnet attract iron?") is None
    signed_in.post(reverse("teacher:page-action", args=[page.pk, "hide"]))
    assert featured_page_for(classroom=classroom, question="How does a magnet attract iron?") is None


def test_re_running_the_check_queues_the_render_check_task(
    signed_in, classroom, make_page, monkeypatch, django_capture_on_commit_callbacks
):
    from explainer.celery import app

    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, **kw: sent.append((name, kw)))
    page = make_page(classroom=classroom)
    with django_capture_on_commit_callbacks(execute=True):
        signed_in.post(reverse("teacher:page-action", args=[page.pk, "recheck"]))
    assert sent == [("explainer.render_check", {"args": [page.pk], "queue": "qa"})]


def test_usage_counts_questions_follow_ups_pages_and_failures_per_learner(signed_in, classroom, learner, make_page):
    leo = learner_join(join_code=classroom.join_code, display_name="Leo")
    first = make_page(classroom=classroom, learner=learner, check=RenderCheck.Status.FAILED)
    make_page(classroom=classroom, learner=learner, thread=first.thread, version=2, kind=Generation.Kind.FOLLOW_UP,
              check=RenderCheck.Status.PASSED)
    make_page(classroom=classroom, learner=leo, check=RenderCheck.Status.PASSED)
    response = signed_in.get(reverse("teacher:usage-csv", args=[classroom.pk]))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_name = {r["learner"]: r for r in rows}
    assert {k: by_name["Mia"][k] for k in ("questions", "follow_ups", "pages", "check_failures")} == {
        "questions": "1", "follow_ups": "1", "pages": "2", "check_failures": "1"}
    assert (by_name["Leo"]["questions"], by_name["Leo"]["check_failures"]) == ("1", "0")
    response = signed_in.get(reverse("teacher:usage", args=[classroom.pk]))
    totals = response.context["totals"]
    assert totals["total"] == {"questions": 2, "follow_ups": 1, "pages": 3, "check_failures": 1}
    assert totals["busiest_day"] == 3
    assert 'style="width: 100%"' in response.content.decode()


def test_usage_keeps_each_removed_learner_apart_under_their_name_marked_removed(
    signed_in, classroom, learner, make_page
):
    from django.utils import timezone

    from explainer.services.classrooms import learner_remove

    leo = learner_join(join_code=classroom.join_code, display_name="Leo")
    make_page(classroom=classroom, learner=learner)
    make_page(classroom=classroom, learner=leo)
    make_page(classroom=classroom, learner=leo, question="Why is the sky blue?")
    learner_remove(learner=learner)
    learner_remove(learner=leo)
    new_mia = learner_join(join_code=classroom.join_code, display_name="Mia")  # the name is free again
    make_page(classroom=classroom, learner=new_mia)
    today = timezone.localdate().isoformat()

    rows = csv.DictReader(io.StringIO(signed_in.get(reverse("teacher:usage-csv", args=[classroom.pk])).content.decode()))
    per_learner = {r["learner"]: r["questions"] for r in rows}
    assert per_learner == {f"Mia (removed {today})": "1", f"Leo (removed {today})": "2", "Mia": "1"}
    body = signed_in.get(reverse("teacher:usage", args=[classroom.pk])).content.decode()
    table = body.split("<h2>Per learner</h2>")[1].split("</table>")[0]
    cells = re.findall(r"<tr><td>([^<]*)</td><td>(\d+)</td>", table)
    assert {name: n for name, n in cells} == per_learner


def test_a_removed_learner_s_pages_and_questions_are_marked_removed_and_still_filterable(
    signed_in, classroom, learner, make_page
):
    from django.utils import timezone

    from explainer.services.classrooms import learner_remove
    from explainer.services.moderation import question_check

    page = make_page(classroom=classroom, learner=learner)
    question_check(classroom=classroom, learner=learner, question="Can a magnet stop a gun?")  # waits in the queue
    learner_remove(learner=learner)
    learner_join(join_code=classroom.join_code, display_name="Leo")  # on the roster, no pages yet
    learner_join(join_code=classroom.join_code, display_name="Mia")  # the name is free again
    removed = f"Mia (removed {timezone.localdate().isoformat()})"

    response = signed_in.get(reverse("teacher:review", args=[classroom.pk]))
    body = response.content.decode()
    assert f"v1 · {removed}" in body
    # The filter lists the roster first, then the removed learner, whose pages it still finds.
    assert [str(option) for option in response.context["learners"]] == ["Leo", "Mia", "Mia"]
    assert [option.label for option in response.context["learners"]][2] == removed
    assert f'value="{learner.pk}">{removed}</option>' in body
    assert gallery(signed_in, classroom, learner=learner.pk) == {page.pk}
    assert f"by {removed}," in signed_in.get(reverse("teacher:page", args=[page.pk])).content.decode()
    queue = signed_in.get(reverse("teacher:moderation", args=[classroom.pk])).content.decode()
    assert f"<td>{removed}</td>" in queue


def test_each_day_s_bar_on_the_usage_page_has_its_count_as_text(signed_in, classroom, learner, make_page):
    first = make_page(classroom=classroom, learner=learner)
    make_page(classroom=classroom, learner=learner, thread=first.thread, version=2, kind=Generation.Kind.FOLLOW_UP)
    body = signed_in.get(reverse("teacher:usage", args=[classroom.pk])).content.decode()
    cell = body.split('id="per-day"')[1].split('class="bar-cell">')[1].split("</td>")[0]
    # The bar itself is only a width: a screen reader reads the hidden count beside it.
    assert re.search(r'<span class="visually-hidden">\s*2\s*</span>', cell), cell


def test_a_refused_topic_form_comes_back_with_everything_the_teacher_typed(signed_in, classroom):
    seeds = "Why is the sky blue?\n光是什么？"
    refused = signed_in.post(reverse("teacher:topic-new", args=[classroom.pk]), {
        "new-title": "L" * 121, "new-seed_questions": seeds, "new-note_to_model": "Use a prism."})
    body = refused.content.decode()
    assert refused.status_code == 200 and "The topic was not saved. Title: " in body
    new_form = body.split('class="topic new"')[1].split("</form>")[0]
    assert html.escape("L" * 121) in new_form and "Use a prism." in new_form
    assert "Why is the sky blue?\n光是什么？" in html.unescape(new_form).replace("\r\n", "\n")
    assert not classroom.topics.filter(title__startswith="LLL").exists()

    magnetism = classroom.topics.get(title="Magnetism")
    refused = signed_in.post(reverse("teacher:topic", args=[classroom.pk, magnetism.pk]), {
        "action": "save", f"t{magnetism.pk}-title": "", f"t{magnetism.pk}-seed_questions": "Why do magnets stick?"})
    edit_form = refused.content.decode().split(f'action="{reverse("teacher:topic", args=[classroom.pk, magnetism.pk])}"')[1]
    assert "Why do magnets stick?" in edit_form.split("</form>")[0]
    magnetism.refresh_from_db()
    assert magnetism.seed_questions == ["How does a magnet attract iron?", "磁铁为什么能吸铁？"]


def test_a_teacher_creates_a_class_renames_it_and_adds_a_topic(signed_in, teacher):
    response = signed_in.post("/teacher/", {"name": "Year 8"})
    classroom = teacher.classrooms.get(name="Year 8")
    assert response["Location"] == reverse("teacher:class", args=[classroom.pk])
    signed_in.post(reverse("teacher:class", args=[classroom.pk]), {
        "name": "Year 8 physics", "languages": ["en", "zh"], "topic_space_enabled": "on",
        "daily_question_limit": "5", "blocklist": "", "blocked_message": "No thanks",
    })
    signed_in.post(reverse("teacher:topic-new", args=[classroom.pk]), {
        "new-title": "Light", "new-seed_questions": "Why is the sky blue?\n光是什么？", "new-note_to_model": ""})
    classroom.refresh_from_db()
    assert (classroom.name, classroom.languages, classroom.topic_space_enabled, classroom.daily_question_limit) == (
        "Year 8 physics", ["en", "zh"], True, 5)
    assert classroom.topics.get().seed_questions == ["Why is the sky blue?", "光是什么？"]
    # A bad post says what was wrong with it, and a good one that it was saved.
    refused = signed_in.post(reverse("teacher:topic-new", args=[classroom.pk]),
                             {"new-title": "L" * 121, "new-seed_questions": ""}, follow=True).content.decode()
    assert "The topic was not saved. Title: " in refused and "at most 120 characters" in refused
    added = signed_in.post(reverse("teacher:topic-new", args=[classroom.pk]), {"new-title": "Sound"},
                           follow=True).content.decode()
    assert "Added the topic “Sound”." in added


def test_asking_a_featured_question_answers_from_the_library_without_generating(
    classroom, learner, make_page, monkeypatch, django_capture_on_commit_callbacks
):
    from explainer.celery import app
    from explainer.services.asking import generation_create
    from explainer.services.review import page_set_featured, page_set_hidden

    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, **kw: sent.append(name))
    featured = make_page(classroom=classroom, learner=learner, html="<h1>The teacher's favourite</h1>")
    page_set_featured(page=featured, featured=True)
    with django_capture_on_commit_callbacks(execute=True):
        generation = generation_create(question="How does a magnet attract iron", session_key="k2", learner=learner)
    assert generation.status == Generation.Status.DONE
    assert generation.page.html == "<h1>The teacher's favourite</h1>"
    assert sent == ["explainer.render_check"]  # no model runs; the page is checked, so its stream ends with qa

    # Hidden, the featured page takes the copies it gave with it; shown again, it alone comes back.
    copy = generation.page
    page_set_hidden(page=featured, hidden=True)
    copy.refresh_from_db()
    assert copy.hidden
    page_set_hidden(page=featured, hidden=False)
    copy.refresh_from_db()
    assert copy.hidden


def test_hiding_from_the_gallery_says_so_and_returns_to_the_gallery(signed_in, classroom, make_page):
    page = make_page(classroom=classroom)
    gallery_url = reverse("teacher:review", args=[classroom.pk]) + "?check=none"
    response = signed_in.post(reverse("teacher:page-action", args=[page.pk, "hide"]), {"next": gallery_url},
                              follow=True)
    assert response.redirect_chain[-1][0] == gallery_url
    assert "learners no longer see this page" in response.content.decode()
    page.refresh_from_db()
    assert page.hidden


def test_a_topic_with_an_exemplar_answers_its_new_questions_with_that_page_and_follow_ups_still_generate(
    signed_in, classroom, learner, monkeypatch, django_capture_on_commit_callbacks
):
    from django.core.exceptions import ValidationError

    from explainer.celery import app
    from explainer.services.asking import generation_create
    from explainer.services.classrooms import topic_update
    from model_worker.corpus import load_pages

    magnetism = classroom.topics.get(title="Magnetism")
    form = reverse("teacher:class", args=[classroom.pk])
    assert 'value="magnetism"' in signed_in.get(form).content.decode()  # the corpus pages are offered
    signed_in.post(reverse("teacher:topic", args=[classroom.pk, magnetism.pk]), {
        f"t{magnetism.pk}-title": "Magnetism", f"t{magnetism.pk}-seed_questions": "How does a magnet attract iron?",
        f"t{magnetism.pk}-note_to_model": "", f"t{magnetism.pk}-exemplar": "magnetism", "action": "save"})
    magnetism.refresh_from_db()
    assert magnetism.exemplar == "magnetism"

    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, **kw: sent.append(name))
    with django_capture_on_commit_callbacks(execute=True):
        asked = generation_create(question="Why does a magnet stick to iron?", session_key="k", learner=learner)
    assert asked.status == Generation.Status.DONE and asked.stats == {"exemplar": "magnetism"}
    assert asked.page.html == next(p.html for p in load_pages() if p.slug == "magnetism")
    assert sent == ["explainer.render_check"]
    with django_capture_on_commit_callbacks(execute=True):
        generation_create(question="Who first found out that the Earth itself is a magnet?", session_key="k",
                          learner=learner, thread_id=asked.thread_id)
    # A follow-up the page's own parts, steps and controls cannot answer revises the page with the model.
    assert sent[1:] == ["model_worker.generate_page"]
    with pytest.raises(ValidationError, match="no exemplar page 'no-such-page'"):
        topic_update(topic=magnetism, title="Magnetism", exemplar="no-such-page")


@pytest.mark.parametrize("name", ["=HYPERLINK(\"http://x.example\",\"hi\")", "+SUM(1,2)", "-2+3", "@cmd", "\tTab"])
def test_a_display_name_that_looks_like_a_formula_is_escaped_in_the_usage_csv(signed_in, classroom, make_page, name):
    learner = learner_join(join_code=classroom.join_code, display_name="x")
    learner.display_name = name  # as a teacher's rename could store it
    learner.save(update_fields=["display_name"])
    make_page(classroom=classroom, learner=learner)
    response = signed_in.get(reverse("teacher:usage-csv", args=[classroom.pk]))
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["learner"] for r in rows] == ["'" + name]
    assert rows[0]["questions"] == "1"  # numbers are left as they are

"""Teachers add kit pages to their class's library: checked first, refused with the field named, nothing half-added."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from explainer.models import LibraryPage, RenderCheck
from explainer.selectors.library_pages import library_pages
from model_worker.corpus import load_pages

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

SKY = next(p for p in load_pages() if p.slug == "sky-blue")
META = {"title": "Why the sky is blue", "lang": "en", "topic": "sky-blue",
        "questions": "Why is the sky blue?\nWhy are sunsets red?"}


@pytest.fixture
def signed_in(client, teacher):
    client.force_login(teacher)
    return client


def add(client, classroom, **fields):
    return client.post(reverse("teacher:library", args=[classroom.pk]), {**META, **fields})


def errors(response) -> dict:
    return {field: " ".join(errs) for field, errs in response.context["form"].errors.items()}


@pytest.mark.browser
def test_a_pasted_kit_page_is_checked_added_and_at_once_in_the_router_s_records(signed_in, classroom):
    response = add(signed_in, classroom, html=SKY.html)
    assert response.status_code == 302, errors(response)
    [record] = library_pages(classroom=classroom)
    assert (record.slug, record.title, record.lang, record.topic) == ("sky-blue", "Why the sky is blue", "en", "sky-blue")
    assert record.questions == ("Why is the sky blue?", "Why are sunsets red?")
    assert record.html == SKY.html
    row = LibraryPage.objects.get()
    assert row.check_report["passed"] and row.source == "paste" and bytes(row.thumbnail).startswith(b"\x89PNG")
    listing = signed_in.get(reverse("teacher:library", args=[classroom.pk])).content.decode()
    assert "Why the sky is blue" in listing and "sky-blue" in listing


@pytest.mark.browser
def test_an_uploaded_page_that_fails_the_render_check_is_refused_with_its_screenshot_and_errors(signed_in, classroom):
    # Ready first, so the check gets as far as its screenshots, then an error.
    broken = SKY.html.replace("const ground =", 'let n = 0; app.onFrame(() => { if (++n === 20) throw new Error("the scene broke"); });\nconst ground =')
    response = add(signed_in, classroom, file=SimpleUploadedFile("sky.html", broken.encode(), "text/html"))
    assert response.status_code == 400
    assert "failed the render check" in errors(response)["file"]
    body = response.content.decode()
    assert "the scene broke" in body
    assert 'src="data:image/png;base64,' in body
    assert LibraryPage.objects.count() == 0


@pytest.mark.browser
def test_a_generated_page_of_the_class_can_be_promoted(signed_in, classroom, learner, make_page):
    page = make_page(classroom=classroom, learner=learner, html=SKY.html, check=RenderCheck.Status.PASSED)
    response = add(signed_in, classroom, page=page.pk, lang="zh", title="天空为什么是蓝色的")
    assert response.status_code == 302, errors(response)
    row = LibraryPage.objects.get()
    assert (row.slug, row.source, row.source_page_id) == ("zh-sky-blue", "generated", page.pk)


def test_promoting_from_a_page_starts_the_form_with_what_the_page_says(signed_in, classroom, learner, make_page):
    page = make_page(classroom=classroom, learner=learner, html=SKY.html, question="Why is the sky blue at noon?")
    page.thread.topic_slug = "zh-sky-blue"
    page.thread.save(update_fields=["topic_slug"])
    response = signed_in.get(reverse("teacher:library", args=[classroom.pk]), {"page": page.pk})
    initial = response.context["form"].initial
    assert initial == {"page": page.pk, "title": SKY.title, "lang": "en", "topic": "sky-blue",
                       "questions": "Why is the sky blue at noon?"}
    for wanted in ("abc", "999999"):  # not a page of this class: an empty form
        assert signed_in.get(reverse("teacher:library", args=[classroom.pk]), {"page": wanted}).status_code == 200


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"html": "just some words"}, "html", "not an HTML page"),
        ({"file": SimpleUploadedFile("x.html", b"\xff\xfe<html>", "text/html")}, "file", "not UTF-8"),
        ({"file": SimpleUploadedFile("big.html", b"<!doctype html>" + b" " * (2 * 1024 * 1024), "text/html")},
         "file", "limit is 2 MB"),
        ({"html": SKY.html + "x" * (2 * 1024 * 1024)}, "html", "limit is 2 MB"),
        ({"html": SKY.html.replace("<title>", '<script src="https://cdn.example.com/three.js"></script><title>')},
         "html", "https://cdn.example.com/three.js"),
        ({"html": SKY.html.replace('"kit": "/static/kit/kit.js"', '"kit": "https://evil.example/kit.js"')},
         "html", "https://evil.example/kit.js"),
        ({"html": SKY.html.replace('import { start, THREE } from "kit";',
                                   'import { start, THREE } from "kit"; import "//evil.example/x.js";')},
         "html", "//evil.example/x.js"),
        ({"html": "<!doctype html><html><body><script>alert(1)</script></body></html>"}, "html", "page kit"),
        ({"html": SKY.html, "title": " "}, "title", "required"),
        ({"html": SKY.html, "lang": "fr"}, "lang", "fr"),
        ({"html": SKY.html, "topic": "Sky Blue!"}, "topic", "lowercase"),
        ({"html": SKY.html, "questions": ""}, "questions", "required"),
        ({}, "__all__", "exactly one page"),
    ],
    ids=["not-html", "not-utf8", "upload-over-2mb", "paste-over-2mb", "remote-script", "remote-import-map",
         "remote-module-import", "no-kit", "no-title", "bad-lang", "bad-topic", "no-questions", "no-page"],
)
def test_bad_input_is_refused_naming_the_field_and_nothing_is_added(signed_in, classroom, fields, field, message):
    response = add(signed_in, classroom, **fields)
    assert response.status_code == 400
    assert message in errors(response).get(field, ""), errors(response)
    assert LibraryPage.objects.count() == 0


def test_a_second_page_on_one_topic_in_one_language_is_refused_before_any_check(signed_in, classroom):
    LibraryPage.objects.create(classroom=classroom, slug="sky-blue", title="t", lang="en", topic="sky-blue",
                               questions=["q"], html=SKY.html, source="paste")
    response = add(signed_in, classroom, html=SKY.html)
    assert "already has an English page on topic 'sky-blue'" in errors(response)["topic"]
    assert LibraryPage.objects.count() == 1


def test_another_teacher_can_neither_see_nor_add_to_the_class_library(client, other_teacher, classroom):
    client.force_login(other_teacher)
    assert client.get(reverse("teacher:library", args=[classroom.pk])).status_code == 404
    assert add(client, classroom, html=SKY.html).status_code == 404


def test_the_teacher_downloads_a_library_page_and_a_generated_page_as_single_files(signed_in, classroom, learner, make_page):
    row = LibraryPage.objects.create(classroom=classroom, slug="sky-blue", title="t", lang="en", topic="sky-blue",
                                     questions=["q"], html=SKY.html, source="paste")
    page = make_page(classroom=classroom, learner=learner, html=SKY.html)
    for url, name in [(reverse("teacher:library-download", args=[row.pk]), "sky-blue.html"),
                      (reverse("teacher:page-download", args=[page.pk]), f"explainer-page-{page.pk}.html")]:
        response = signed_in.get(url)
        assert response["Content-Disposition"] == f'attachment; filename="{name}"'
        body = response.content.decode()
        assert "<style data-kit-css>" in body and "/static/" not in body
    assert 'id="download"' in signed_in.get(reverse("teacher:page", args=[page.pk])).content.decode()

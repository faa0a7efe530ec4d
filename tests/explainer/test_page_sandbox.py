"""A stored page is served sandboxed under a strict policy, and hidden pages stay hidden from learners."""

from __future__ import annotations

import pytest
from django.urls import reverse

from explainer.models import Classroom, Generation, PageVersion, RenderCheck, Thread
from explainer.pages.links import thumbnail_link
from explainer.selectors.generation import page_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def teacher(django_user_model):
    return django_user_model.objects.create_user("ms-lee", password="correct horse battery")


@pytest.fixture
def page(teacher):
    classroom = Classroom.objects.create(name="7B", teacher=teacher)
    thread = Thread.objects.create(classroom=classroom)
    generation = Generation.objects.create(thread=thread, classroom=classroom, question="Why is the sky blue?")
    return PageVersion.objects.create(
        thread=thread, generation=generation, version=1, html="<!doctype html><h1>Sky</h1>"
    )


def policy_of(response) -> dict[str, str]:
    directives = {}
    for part in response["Content-Security-Policy"].split(";"):
        name, _, value = part.strip().partition(" ")
        directives[name] = value
    return directives


def test_a_page_is_served_with_its_html_in_a_scripts_only_sandbox(client, page):
    response = client.get(page_url(page))
    assert response.status_code == 200
    assert response.content.decode() == page.html
    assert response["Content-Type"].startswith("text/html")
    policy = policy_of(response)
    assert policy["sandbox"] == "allow-scripts"  # no allow-same-origin: an opaque origin


def test_the_policy_allows_static_and_inline_code_and_nothing_else(client, page):
    policy = policy_of(client.get(page_url(page)))
    assert policy["default-src"] == "'none'"
    assert policy["script-src"].split() == ["'unsafe-inline'", "http://testserver"]
    assert policy["connect-src"] == "'none'"
    assert policy["img-src"].split() == ["data:", "blob:"]
    assert policy["form-action"] == "'none'"
    assert policy["base-uri"] == "'none'"
    assert policy["frame-ancestors"] == "http://testserver"
    assert "*" not in " ".join(policy.values())


def test_the_page_response_sets_no_cookie_and_may_be_framed_by_the_app(client, page):
    response = client.get(page_url(page))
    assert not response.cookies
    assert "X-Frame-Options" not in response  # frame-ancestors decides instead
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "no-referrer"


def test_with_a_page_origin_the_app_origin_redirects_there_and_may_frame_it(client, page, settings):
    settings.PAGE_ORIGIN = "https://pages.example.org"
    settings.APP_ORIGIN = "https://app.example.org"
    settings.ALLOWED_HOSTS = ["testserver", "pages.example.org"]
    url = page_url(page)
    assert url.startswith("https://pages.example.org/pages/")
    path = url.removeprefix("https://pages.example.org")

    on_app = client.get(path)
    assert on_app.status_code == 302
    assert on_app["Location"] == url

    on_pages = client.get(path, HTTP_HOST="pages.example.org", secure=True)
    assert on_pages.status_code == 200
    policy = policy_of(on_pages)
    assert policy["script-src"].split() == ["'unsafe-inline'", "https://pages.example.org"]
    assert policy["frame-ancestors"] == "https://app.example.org"


def test_a_hidden_page_answers_404_to_a_learner_but_not_to_its_teacher(client, page, teacher):
    page.hidden = True
    page.save(update_fields=["hidden"])
    url = page_url(page)
    assert client.get(url).status_code == 404
    client.force_login(teacher)
    assert client.get(url).status_code == 200


def test_a_missing_page_answers_404(client):
    assert client.get(reverse("page_view", args=[999_999])).status_code == 404


def test_a_page_without_its_signed_link_answers_404(client, page):
    bare = reverse("page_view", args=[page.pk])
    assert client.get(bare).status_code == 404
    assert client.get(bare + "?k=forged").status_code == 404


def test_a_link_signed_for_one_page_does_not_open_another(client, page):
    other = PageVersion.objects.create(
        thread=page.thread, generation=Generation.objects.create(thread=page.thread, question="q2"),
        version=page.version + 1, html="<p>other</p>",
    )
    token = page_url(page).split("?k=")[1]
    assert client.get(reverse("page_view", args=[other.pk]) + f"?k={token}").status_code == 404
    assert client.get(page_url(other)).status_code == 200


def test_an_expired_link_goes_to_the_lasting_link_which_answers_404_to_another_browser(client, page, settings):
    url = page_url(page)
    settings.PAGE_LINK_TTL_S = -1
    expired = client.get(url)
    assert expired.status_code == 302 and expired["Location"] == reverse("page_open", args=[page.pk])
    assert client.get(url, follow=True).status_code == 404
    # Its thumbnail, by the same expired link, is simply not found.
    assert client.get(thumbnail_link(page.pk)).status_code == 404


def test_the_class_teacher_opens_a_page_without_a_link(client, page, teacher):
    client.force_login(teacher)
    assert client.get(reverse("page_view", args=[page.pk])).status_code == 200


def test_the_thumbnail_url_serves_the_latest_check_png_unless_the_page_is_hidden(client, page):
    url = thumbnail_link(page.pk)
    assert client.get(url).status_code == 404  # not checked yet
    png = b"\x89PNG\r\n\x1a\n" + b"latest"
    RenderCheck.objects.create(page=page, status="passed", thumbnail=b"\x89PNG\r\n\x1a\nolder")
    RenderCheck.objects.create(page=page, status="passed", thumbnail=png)
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response.content == png
    page.hidden = True
    page.save(update_fields=["hidden"])
    assert client.get(url).status_code == 404


def test_static_files_carry_the_cors_header_sandboxed_module_imports_need():
    from django.test import RequestFactory

    from explainer.pages.static import CorsStaticFilesHandler

    handler = CorsStaticFilesHandler(lambda environ, start_response: None)
    response = handler.serve(RequestFactory().get("/static/kit/kit.js"))
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"

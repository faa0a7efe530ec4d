"""A learner's tab keeps working: its page links do not expire, HEAD is answered, the icon is there."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from explainer.models import Generation, PageVersion, Thread
from explainer.pages.links import download_link, page_link
from model_worker.corpus import load_pages

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

HTML = next(p.html for p in load_pages() if p.slug == "sky-blue")


@pytest.fixture
def my_page(client):
    """A page of a thread of the browser `client` is."""
    client.get(reverse("home"))  # the visit gives the browser its session
    thread = Thread.objects.create(session_key=client.session.session_key)
    generation = Generation.objects.create(thread=thread, question="Why is the sky blue?", status=Generation.Status.DONE)
    return PageVersion.objects.create(thread=thread, generation=generation, version=1, html=HTML)


def follow(client, url: str):
    response = client.get(url)
    assert response.status_code == 302, response.status_code
    return client.get(response["Location"])


def test_the_lasting_link_opens_the_page_after_its_signed_link_has_expired(client, my_page, settings, monkeypatch):
    old = page_link(my_page.pk)
    later = time.time() + settings.PAGE_LINK_TTL_S + 60
    monkeypatch.setattr(time, "time", lambda: later)  # the tab has been open longer than a signed link lasts
    # A frame restored from history (Back, a tab the phone reloaded) asks for the link it was first sent to.
    expired = client.get(old)
    assert expired.status_code == 302 and expired["Location"] == reverse("page_open", args=[my_page.pk])
    opened = follow(client, reverse("page_open", args=[my_page.pk]))
    assert opened.status_code == 200 and opened.content.decode() == HTML
    assert opened["Content-Security-Policy"]  # served sandboxed, as by the signed link
    saved = follow(client, reverse("page_open", args=[my_page.pk]) + "?download=1")
    assert saved.status_code == 200 and "attachment" in saved["Content-Disposition"]


def test_the_lasting_link_opens_only_this_browser_s_visible_pages(client, my_page):
    other = Thread.objects.create(session_key="someone-else")
    theirs = PageVersion.objects.create(thread=other, generation=Generation.objects.create(thread=other, question="q"),
                                        version=1, html=HTML)
    assert client.get(reverse("page_open", args=[theirs.pk])).status_code == 404
    my_page.hidden = True
    my_page.save()
    assert client.get(reverse("page_open", args=[my_page.pk])).status_code == 404


def test_head_requests_are_answered_like_get(client, my_page):
    assert client.head(page_link(my_page.pk)).status_code == 200
    assert client.head(reverse("home")).status_code == 200
    assert client.head(reverse("page_open", args=[my_page.pk])).status_code == 302


def test_the_browser_s_icon_request_finds_the_app_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("app/favicon.svg")
    assert b'rel="icon"' in client.get(reverse("home")).content


def test_a_page_that_cannot_be_saved_as_one_file_says_why(client, my_page):
    my_page.html = "<!doctype html><html><body>no kit here</body></html>"
    my_page.save()
    response = client.get(download_link(my_page.pk))
    assert response.status_code == 422
    assert "cannot be saved as one file" in response.content.decode()


def expire_links(monkeypatch, settings):
    later = time.time() + settings.PAGE_LINK_TTL_S + 60
    monkeypatch.setattr(time, "time", lambda: later)


def test_an_expired_link_reopens_the_page_for_its_own_browser_and_for_no_other(client, my_page, settings,
                                                                               monkeypatch):
    from django.test import Client

    old, old_download = page_link(my_page.pk), download_link(my_page.pk)
    expire_links(monkeypatch, settings)
    assert client.get(old, follow=True).content.decode() == HTML
    saved = client.get(old_download, follow=True)
    assert saved.status_code == 200 and "attachment" in saved["Content-Disposition"]
    stranger = Client()
    assert stranger.get(old, follow=True).status_code == 404
    assert stranger.get(old_download, follow=True).status_code == 404


def test_a_link_that_was_never_signed_for_the_page_is_not_found_without_a_detour(client, my_page):
    forged = reverse("page_view", args=[my_page.pk]) + "?k=forged"
    assert client.get(forged).status_code == 404
    other = Thread.objects.create(session_key=client.session.session_key)
    theirs = PageVersion.objects.create(thread=other, generation=Generation.objects.create(thread=other, question="q"),
                                        version=1, html=HTML)
    borrowed = page_link(my_page.pk).split("?k=")[1]  # a real token, for another page
    assert client.get(reverse("page_view", args=[theirs.pk]) + f"?k={borrowed}").status_code == 404


def test_on_a_page_origin_an_expired_link_goes_back_to_the_app_s_lasting_link(client, my_page, settings,
                                                                              monkeypatch):
    settings.PAGE_ORIGIN, settings.APP_ORIGIN = "http://pages.testserver", "http://testserver"
    settings.ALLOWED_HOSTS = ["testserver", "pages.testserver"]
    old = page_link(my_page.pk)
    expire_links(monkeypatch, settings)
    expired = client.get(old, HTTP_HOST="pages.testserver")
    assert expired.status_code == 302
    assert expired["Location"] == "http://testserver" + reverse("page_open", args=[my_page.pk])

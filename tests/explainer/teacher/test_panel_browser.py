"""The panel in Chromium: a teacher signs in, creates a class, sees a learner's page and hides it while the
learner has the page open; the learner's view drops it at once."""

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from explainer.models import Classroom, Generation, Learner, PageVersion, RenderCheck, Thread
from explainer.render_check.browser import launch_options
from tests.support.accessibility import serious_violations
from tests.support.sockets import SOCKET_SPY

from .conftest import tiny_png

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def learner_page(learner: Learner, session_key: str) -> PageVersion:
    """A finished page as the learner's question would leave it, with its render-check thumbnail."""
    thread = Thread.objects.create(session_key=session_key, learner=learner, classroom=learner.classroom)
    generation = Generation.objects.create(thread=thread, learner=learner, classroom=learner.classroom,
                                           question="Why does a compass point north?", status="done")
    page = PageVersion.objects.create(thread=thread, generation=generation, version=1, html="<h1>Compass</h1>")
    RenderCheck.objects.create(page=page, status=RenderCheck.Status.PASSED, thumbnail=tiny_png())
    return page


def test_a_teacher_hides_a_learners_page_and_it_leaves_the_learners_open_view(
    live_server_url, django_user_model, monkeypatch
):
    # Playwright's sync API runs an event loop in this thread; the ORM calls below are still plain sync calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    django_user_model.objects.create_user(username="ada", password="pw-ada-123")
    with sync_playwright() as p:
        browser = p.chromium.launch(**launch_options())
        try:
            teacher = browser.new_context().new_page()
            teacher.goto(f"{live_server_url}/teacher/")
            expect(teacher).to_have_url(re.compile(r"/teacher/login/"))
            teacher.fill("input[name=username]", "ada")
            teacher.fill("input[name=password]", "pw-ada-123")
            teacher.click("button[type=submit]")
            teacher.fill("#new-class input[name=name]", "Room 12")
            teacher.click("#new-class button[type=submit]")
            code = teacher.locator("#join-code").inner_text().strip()
            assert Classroom.objects.get(name="Room 12").join_code == code
            assert serious_violations(teacher) == []  # the panel's class page, as axe-core judges it

            learner_context = browser.new_context()
            learner_context.add_init_script(SOCKET_SPY)
            learner_view = learner_context.new_page()
            learner_view.goto(f"{live_server_url}/join/")
            assert serious_violations(learner_view) == []
            learner_view.fill("input[name=join_code]", code.lower())
            learner_view.fill("input[name=display_name]", "Mia")
            learner_view.click("#join button[type=submit]")
            session_key = next(c["value"] for c in learner_context.cookies() if c["name"] == "sessionid")
            page = learner_page(Learner.objects.get(display_name="Mia"), session_key)
            learner_view.goto(f"{live_server_url}/t/{page.thread_id}/")
            version = learner_view.locator(f".version[data-page='{page.pk}']")
            expect(version).to_have_count(1)
            assert serious_violations(learner_view) == []  # the learner's thread view
            learner_view.wait_for_function("() => window.socketEvents.some(e => e.type === 'hello')")

            teacher.click("text=Review")
            tile = teacher.locator(f"li.tile[data-page='{page.pk}']")
            expect(tile).to_contain_text("Why does a compass point north?")
            thumb = tile.locator("img")
            expect(thumb).to_be_visible()
            teacher.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
            tile.locator("button", has_text="Hide").click()
            expect(teacher.locator(f"li.tile[data-page='{page.pk}']")).to_contain_text("hidden")

            expect(version).to_have_count(0, timeout=10000)
            expect(learner_view.locator("#page-question")).to_have_text("Your teacher hid this page.")
            assert learner_view.locator("#page-frame").get_attribute("src") is None
            assert any(e["type"] == "page_hidden" and e["page"] == page.pk
                       for e in learner_view.evaluate("window.socketEvents"))
            page.refresh_from_db()
            assert page.hidden

            # The header's links take a mouse click (nothing lies over them): Moderation, then Sign out.
            teacher.locator("header.bar nav a", has_text="Moderation").click(timeout=5000)
            expect(teacher).to_have_url(re.compile(r"/moderation/"))
            # On a phone the page does not scroll sideways: the header wraps, wide tables scroll inside.
            teacher.set_viewport_size({"width": 375, "height": 800})
            for screen in (teacher.url, teacher.url.replace("/moderation/", "/library/")):
                teacher.goto(screen)
                assert teacher.evaluate("document.scrollingElement.scrollWidth") <= 376, screen
            teacher.set_viewport_size({"width": 1280, "height": 800})
            bar, sign_out = teacher.locator("header.bar"), teacher.locator("header.bar .signout button")
            box, inner = bar.bounding_box(), sign_out.bounding_box()
            assert inner["y"] + inner["height"] <= box["y"] + box["height"] + 1  # the bar holds its links
            sign_out.click(timeout=5000)
            expect(teacher).to_have_url(re.compile(r"/teacher/login/"))
        finally:
            browser.close()

"""Safe defaults: no debug page unless developing, no development key in production, short-lived page
links, HSTS and a policy on the app's own pages."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core import signing
from django.urls import reverse

from explainer.models import Classroom, Generation, PageVersion, Thread
from explainer.selectors.generation import page_url
from explainer.settings.base import DEV_SECRET_KEY

ROOT = Path(__file__).resolve().parents[2]
PROD_MIDDLEWARE_ADDS = "explainer.security.ContentSecurityPolicyMiddleware"


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}} | env
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True,
                          timeout=120)


def test_debug_is_off_unless_the_dev_settings_turn_it_on():
    result = _python("from explainer.settings import base; print(base.DEBUG)")
    assert result.stdout.strip() == "False", result.stderr
    result = _python("from explainer.settings import dev; print(dev.DEBUG)")
    assert result.stdout.strip() == "True", result.stderr


@pytest.mark.parametrize("key", [DEV_SECRET_KEY, "", "  "])
def test_production_refuses_the_development_or_an_empty_secret_key(key):
    result = _python("import django; from django.conf import settings; settings.DEBUG",
                     DJANGO_SETTINGS_MODULE="explainer.settings.prod", SECRET_KEY=key, ALLOWED_HOSTS="a.org",
                     DATABASE_URL="sqlite:///tmp/p.sqlite3")
    assert result.returncode != 0
    assert "SECRET_KEY is empty or the development key" in result.stderr


@pytest.fixture
def page(django_user_model):
    classroom = Classroom.objects.create(name="7B", teacher=django_user_model.objects.create(username="t"))
    thread = Thread.objects.create(classroom=classroom, session_key="")
    generation = Generation.objects.create(thread=thread, classroom=classroom, question="Why is the sky blue?")
    return PageVersion.objects.create(thread=thread, generation=generation, version=1, html="<h1>Sky</h1>")


def test_a_page_link_lives_minutes_not_days(settings):
    assert settings.PAGE_LINK_TTL_S <= 60 * 60


def test_an_old_link_stops_working_and_reopening_the_thread_hands_out_a_fresh_one(client, page, settings, monkeypatch):
    old = page_url(page)
    later = time.time() + settings.PAGE_LINK_TTL_S + 5
    monkeypatch.setattr(signing.time, "time", lambda: later)
    assert client.get(old, follow=True).status_code == 404  # by way of the lasting link: not this browser's
    client.get("/")  # the browser gets its session
    Thread.objects.filter(pk=page.thread_id).update(session_key=client.session.session_key)
    response = client.get(reverse("thread", args=[page.thread_id]))
    lasting = response.context["versions"][0]["url"]  # the app's own link, which signs a fresh one
    fresh = client.get(lasting)["Location"]
    assert fresh != old
    assert client.get(fresh).status_code == 200


def test_production_sends_hsts_and_a_policy_on_the_apps_own_pages_but_keeps_the_page_sandbox(client, page, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, PROD_MIDDLEWARE_ADDS]
    settings.SECURE_HSTS_SECONDS = 31536000
    response = client.get("/", secure=True)
    assert response["Strict-Transport-Security"].startswith("max-age=31536000")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "object-src 'none'" in policy and "frame-src 'self'" in policy
    served = client.get(page_url(page), secure=True)
    assert served["Content-Security-Policy"].startswith("sandbox allow-scripts")

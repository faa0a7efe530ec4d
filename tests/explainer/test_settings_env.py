"""The environment is read in one place, and a bad value stops start-up with a clear message."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from explainer.settings import env

ROOT = Path(__file__).resolve().parents[2]


def test_postgres_url_becomes_a_postgresql_database_entry():
    db = env.database_from_url("postgres://alice:s%40cret@db.example.org:5433/explainer")
    assert db["ENGINE"] == "django_prometheus.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "explainer", "alice", "s@cret", "db.example.org", "5433"
    )


def test_sqlite_url_keeps_its_path():
    assert env.database_from_url("sqlite:////tmp/x.sqlite3")["NAME"] == "/tmp/x.sqlite3"


@pytest.mark.parametrize("url", ["mysql://x/y", "postgres://host/", "sqlite://"])
def test_unsupported_or_incomplete_database_urls_are_refused(url):
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        env.database_from_url(url)


def test_a_bad_boolean_names_the_variable(monkeypatch):
    monkeypatch.setenv("DEBUG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="DEBUG='maybe'"):
        env.env_bool("DEBUG", True)


def test_page_origin_must_be_an_origin(monkeypatch):
    monkeypatch.setenv("PAGE_ORIGIN", "pages.example.org")
    with pytest.raises(ImproperlyConfigured, match="PAGE_ORIGIN"):
        env.origin("PAGE_ORIGIN", "")


def _check_with(**extra: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "explainer.settings.prod", **extra}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )


def test_production_settings_refuse_to_start_without_a_secret_key():
    environ_without_secret = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**environ_without_secret, "DJANGO_SETTINGS_MODULE": "explainer.settings.prod"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_settings_name_a_bad_redis_url():
    result = _check_with(SECRET_KEY="x", ALLOWED_HOSTS="a.org", DATABASE_URL="sqlite:///tmp/p.sqlite3",
                         REDIS_URL="http://nope")
    assert result.returncode != 0
    assert "REDIS_URL 'http://nope'" in result.stderr


def test_a_separate_page_origin_needs_the_app_origin_to_frame_pages():
    result = _check_with(SECRET_KEY="x", ALLOWED_HOSTS="a.org", DATABASE_URL="sqlite:///tmp/p.sqlite3",
                         PAGE_ORIGIN="https://pages.a.org")
    assert result.returncode != 0
    assert "APP_ORIGIN" in result.stderr
    ok = _check_with(SECRET_KEY="x", ALLOWED_HOSTS="a.org", DATABASE_URL="sqlite:///tmp/p.sqlite3",
                     PAGE_ORIGIN="https://pages.a.org", APP_ORIGIN="https://a.org")
    assert ok.returncode == 0, ok.stderr

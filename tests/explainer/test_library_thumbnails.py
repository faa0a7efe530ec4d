"""`manage.py library_thumbnails`: each library page pictured once by the render check, a failed check leaving
the placeholder, a page changed since pictured again."""

from __future__ import annotations

import os

import pytest
from django.core.management import call_command

from explainer.render_check import RenderReport
from tests.explainer.teacher.conftest import tiny_png

SLUGS = ["sky-blue", "zh-tides"]


def run(*args) -> tuple[int, str]:
    from io import StringIO

    out = StringIO()
    with pytest.raises(SystemExit) as ended:
        call_command("library_thumbnails", *args, stdout=out, stderr=out)
    return ended.value.code, out.getvalue()


@pytest.fixture
def checks(monkeypatch, settings, tmp_path):
    """The render check stood in for: a page whose HTML holds "tides" fails it; every call is listed."""
    settings.LIBRARY_THUMBNAILS_DIR = tmp_path / "thumbs"
    seen = []

    def check_html(html):
        seen.append(html)
        report = RenderReport(url="stand-in")
        passed = "潮汐" not in html
        report.add("ready", passed, "stand-in")
        report.thumbnail = tiny_png() if passed else None
        return report

    monkeypatch.setattr("explainer.render_check.check_html", check_html)
    return seen


def test_each_page_is_pictured_once_and_a_failed_check_keeps_the_placeholder(checks, settings):
    code, out = run(*SLUGS)
    assert code == 1 and "made   sky-blue" in out and "failed zh-tides: ready" in out
    folder = settings.LIBRARY_THUMBNAILS_DIR
    assert sorted(p.name for p in folder.iterdir()) == ["sky-blue.png"]
    assert (folder / "sky-blue.png").read_bytes() == tiny_png()

    code, out = run("sky-blue")
    assert code == 0 and "kept   sky-blue" in out and len(checks) == 2  # not checked again
    run("--force", "sky-blue")
    assert len(checks) == 3


def test_a_page_changed_since_its_picture_is_pictured_again(checks, settings):
    run("sky-blue")
    picture = settings.LIBRARY_THUMBNAILS_DIR / "sky-blue.png"
    source = settings.LIBRARY_DIR / "pages" / "sky-blue.html"
    os.utime(picture, (source.stat().st_mtime - 10,) * 2)  # older than the page
    code, out = run("sky-blue")
    assert code == 0 and "made   sky-blue" in out and len(checks) == 2


def test_a_slug_the_library_lacks_is_named_and_nothing_is_checked(checks):
    code, out = run("no-such-page")
    assert code == 2 and "'no-such-page' is not a library page" in out and checks == []


@pytest.mark.browser
def test_the_real_render_check_pictures_a_library_page(settings, tmp_path):
    settings.LIBRARY_THUMBNAILS_DIR = tmp_path
    code, out = run("sky-blue")
    assert code == 0, out
    assert (tmp_path / "sky-blue.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

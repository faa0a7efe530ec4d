"""The render check passes working pages and fails broken ones, naming the check that caught them."""

from __future__ import annotations

import time

import pytest

from explainer.render_check import CheckOptions, check_html

from .pages import break_plain_page as break_plain
from .pages import kit_page, plain_page

pytestmark = pytest.mark.browser

PNG = b"\x89PNG\r\n\x1a\n"


def test_a_good_kit_page_passes_every_check():
    report = check_html(kit_page())
    assert report.passed, report.summary()
    assert set(report.checks) >= {"ready", "errors", "csp", "network", "canvas", "interaction", "overflow"}
    assert report.checks["ready"].detail == "the kit signalled ready"
    assert report.metrics["interaction"]["click"]["part_opened"]  # the click landed on a part and opened it
    assert report.thumbnail.startswith(PNG)
    assert report.screenshots["canvas@0.5s"].startswith(PNG)
    assert report.screenshots["canvas@1.5s"].startswith(PNG)


def test_a_good_page_without_the_kit_passes_too():
    report = check_html(plain_page())
    assert report.passed, report.summary()
    assert report.checks["animates"].passed  # the cube spins between the two timed screenshots


@pytest.mark.parametrize(
    ("html", "check"),
    [
        pytest.param(break_plain("<script type=\"module\">", "<script>let = ;</script><script type=\"module\">"),
                     "errors", id="syntax-error"),
        pytest.param(break_plain("renderer.setAnimationLoop(", "throw new Error('scene failed');\nrenderer.setAnimationLoop("),
                     "errors", id="throws"),
        pytest.param(break_plain("renderer.render(scene, camera);", ""), "canvas", id="blank-canvas"),
        pytest.param(
            break_plain('<label>Size <input id="size" type="range" min="0.5" max="2" step="0.1" value="1"></label>', "")
            .replace('canvas.addEventListener("click"', 'canvas.addEventListener("never-fired"')
            .replace('document.getElementById("size").addEventListener', '(document.getElementById("size") || canvas).addEventListener'),
            "interaction", id="no-controls"),
        pytest.param(break_plain('document.getElementById("size").addEventListener("input"',
                                 'document.getElementById("size").addEventListener("never-fired"'),
                     "interaction", id="slider-that-does-nothing-on-a-spinning-scene"),
        pytest.param(break_plain('<div class="controls">', '<div style="width: 600px">wide</div><div class="controls">'),
                     "overflow", id="overflow-at-390px"),
        pytest.param(break_plain("</head>", '<script src="https://cdn.example.com/three.min.js"></script></head>'),
                     "csp", id="remote-script"),
        pytest.param(break_plain("</head>", '<link rel="stylesheet" href="/static/no-such-file.css"></head>'),
                     "network", id="missing-asset"),
    ],
)
def test_a_broken_page_fails_with_the_check_that_caught_it(html, check):
    report = check_html(html)
    assert not report.passed
    assert check in report.failed_checks, report.summary()


def test_a_kit_page_that_never_signals_ready_fails_with_a_clear_reason():
    # Says "loading" as the kit does, and never moves on.
    html = break_plain("</head>", '<script>document.documentElement.dataset.kitState = "loading";</script></head>')
    report = check_html(html, options=CheckOptions(ready_timeout_s=2))
    assert report.failed_checks[0] == "ready"
    assert "never signalled ready within 2 s" in report.checks["ready"].detail


def test_a_page_that_locks_up_the_browser_fails_instead_of_hanging_the_check():
    html = break_plain("renderer.setAnimationLoop(", "setTimeout(() => { for (;;) {} }, 300);\nrenderer.setAnimationLoop(")
    started = time.monotonic()
    report = check_html(html, options=CheckOptions(total_timeout_s=6, shot_times_s=(0.5, 1.0)))
    assert time.monotonic() - started < 20
    assert not report.passed
    assert report.error is None  # a verdict on the page, not a broken checker
    # And the warm browser still works for the next page.
    assert check_html(plain_page()).passed


def test_a_page_can_load_its_static_files_from_a_running_server():
    from explainer.render_check.servers import page_server

    # Any origin serving /static/ will do; here, the checker's own server for the project folder.
    upstream = page_server().origin
    report = check_html(kit_page(), base_url=upstream)
    assert report.passed, report.summary()
    assert report.url.split("/__page__/")[0] != upstream  # relayed, not served by the upstream itself
    missing = check_html(kit_page(), base_url="http://127.0.0.1:9")  # nothing listens there
    assert {"ready", "network"} <= set(missing.failed_checks)


def test_a_page_with_a_nameless_button_fails_the_accessibility_check_and_a_repair_hears_the_rule():
    good = check_html(kit_page())
    assert good.checks["accessible"].passed, good.checks["accessible"].detail
    report = check_html(kit_page().replace("</body>", '<button class="play"></button></body>'))
    assert not report.passed and not report.checks["accessible"].passed
    assert "button-name (critical)" in report.checks["accessible"].detail
    assert any(error.startswith("accessible: button-name (critical)") for error in report.repair_errors())
    assert {v["id"] for v in report.metrics["accessibility"]} >= {"button-name"}

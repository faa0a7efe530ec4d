"""An exported page is one file that renders from file:// in Chromium with the network cut off."""

from __future__ import annotations

import base64
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.urls import reverse

from explainer.models import Generation, PageVersion, Thread
from explainer.pages.export import ExportError, export_html
from explainer.pages.links import page_link
from explainer.render_check.browser import launch_options
from model_worker.corpus import load_pages

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
PAGES = {p.slug: p for p in load_pages()}


def open_offline(path: Path) -> dict:
    """Open `path` from file:// with every http(s) request aborted; what the page did and drew."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_options())
        try:
            context = browser.new_context(viewport={"width": 900, "height": 600}, reduced_motion="reduce")
            attempted: list[str] = []

            def refuse(route):
                attempted.append(route.request.url)
                route.abort()

            context.route(lambda url: url.startswith(("http://", "https://")), refuse)
            page = context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("console", lambda m: m.type == "error" and problems.append(m.text))
            page.on("request", lambda r: r.url.startswith(("file:", "data:", "blob:")) or attempted.append(r.url))
            page.goto(path.as_uri())
            deadline = time.monotonic() + 30
            while page.evaluate("document.documentElement.dataset.kitState") == "loading" and time.monotonic() < deadline:
                page.wait_for_timeout(50)
            state = page.evaluate("document.documentElement.dataset.kitState")
            page.wait_for_timeout(200)
            # Pixels of the canvas's screenshot unlike its corner (the background): a drawn scene has many.
            png = base64.b64encode(page.locator("canvas").screenshot()).decode()
            drawn = page.evaluate("""(b64) => new Promise((done) => {
              const img = new Image();
              img.onload = () => {
                const c = document.createElement("canvas"); c.width = img.width; c.height = img.height;
                const g = c.getContext("2d"); g.drawImage(img, 0, 0);
                const d = g.getImageData(0, 0, c.width, c.height).data; let n = 0;
                for (let i = 0; i < d.length; i += 4)
                  if (Math.abs(d[i] - d[0]) + Math.abs(d[i + 1] - d[1]) + Math.abs(d[i + 2] - d[2]) > 30) n++;
                done(n);
              };
              img.src = "data:image/png;base64," + b64;
            })""", png)
            return {"state": state, "errors": page.evaluate("__kit.errors"), "problems": problems,
                    "attempted": attempted, "drawn": drawn, "parts": page.evaluate("__kit.parts")}
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.parametrize("slug", ["sky-blue", "zh-sky-blue"])
def test_an_exported_library_page_renders_from_file_with_no_network(tmp_path, slug):
    out = tmp_path / f"{slug}.html"
    out.write_text(export_html(PAGES[slug].html, static_root=STATIC), encoding="utf-8")
    seen = open_offline(out)
    assert seen["state"] == "ready", seen
    assert seen["attempted"] == [], "the exported page asked a server for something"
    assert seen["problems"] == [] and seen["errors"] == []
    assert seen["drawn"] > 5000, "the canvas is blank"
    assert len(seen["parts"]) >= 3


def test_the_export_inlines_the_kit_and_three_and_keeps_no_static_url():
    out = export_html(PAGES["sky-blue"].html, static_root=STATIC)
    assert "/static/" not in out
    assert "<style data-kit-css>" in out
    assert out.count('<script type="importmap">') == 1
    assert '"@offline/kit/quiz.js":"data:text/javascript;base64,' in out
    assert "BufferGeometryUtils" not in out  # only modules the page reaches


def test_a_page_importing_something_outside_static_cannot_be_exported():
    html = PAGES["sky-blue"].html.replace('"kit": "/static/kit/kit.js"', '"kit": "https://cdn.example/kit.js"')
    with pytest.raises(ExportError, match="outside /static/"):
        export_html(html, static_root=STATIC)


@pytest.mark.django_db
def test_the_export_command_writes_a_library_page_and_refuses_an_unknown_one(tmp_path):
    out = tmp_path / "sky.html"
    done = subprocess.run([sys.executable, "manage.py", "export", "sky-blue", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == export_html(PAGES["sky-blue"].html, static_root=STATIC)
    missing = subprocess.run([sys.executable, "manage.py", "export", "no-such-topic", "-o", str(tmp_path / "x.html")],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "'no-such-topic' is neither" in missing.stderr


@pytest.mark.django_db
@pytest.mark.postgres
def test_the_learner_s_signed_link_downloads_the_self_contained_page(client):
    thread = Thread.objects.create(session_key="s")
    generation = Generation.objects.create(thread=thread, question="Why is the sky blue?", status=Generation.Status.DONE)
    page = PageVersion.objects.create(thread=thread, generation=generation, version=1, html=PAGES["sky-blue"].html)
    link = page_link(page.pk).replace(f"/pages/{page.pk}/", f"/pages/{page.pk}/download/")
    response = client.get(link)
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="explainer-page-{page.pk}.html"'
    assert "<style data-kit-css>" in response.content.decode()
    assert client.get(reverse("page_download", args=[page.pk])).status_code == 404  # no token, no page

"""A local server for kit pages, run like production: sandboxed opaque origin under a strict CSP."""

from __future__ import annotations

import http.server
import importlib.util
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
CORPUS_PAGES = ROOT / "model_worker" / "corpus" / "pages"

# What the app sends with a generated page: scripts and styles only from this server or inline,
# no network access from the page, and an opaque origin.
PAGE_CSP = (
    "sandbox allow-scripts; default-src 'none'; script-src 'self' 'unsafe-inline'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'none'; font-src 'self'"
)
TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html; charset=utf-8"}


def ensure_vendored() -> None:
    spec = importlib.util.spec_from_file_location("vendor", ROOT / "scripts" / "vendor.py")
    vendor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor)
    vendor.main()


class KitServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.pages: dict[str, str] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: KitServer

    def do_GET(self):  # noqa: N802 (http.server's naming)
        path = urlparse(self.path).path
        if path.startswith("/static/"):
            file = (STATIC / path.removeprefix("/static/")).resolve()
            if STATIC in file.parents and file.is_file():
                # Pages have an opaque origin, so their module imports are cross-origin requests.
                return self._send(file.read_bytes(), TYPES.get(file.suffix, "application/octet-stream"),
                                  {"Access-Control-Allow-Origin": "*"})
        elif path.startswith("/pages/") and path.removeprefix("/pages/") in self.server.pages:
            html = self.server.pages[path.removeprefix("/pages/")]
            return self._send(html.encode(), TYPES[".html"], {"Content-Security-Policy": PAGE_CSP})
        elif path.startswith("/corpus/"):
            file = (CORPUS_PAGES / path.removeprefix("/corpus/")).resolve()
            if CORPUS_PAGES in file.parents and file.suffix == ".html" and file.is_file():
                return self._send(file.read_bytes(), TYPES[".html"], {"Content-Security-Policy": PAGE_CSP})
        elif path.startswith("/host/"):
            # A parent window that embeds a page and records what the kit posts to it.
            src = "/pages/" + path.removeprefix("/host/")
            html = (
                "<!doctype html><meta charset=utf-8><script>window.messages = [];"
                "addEventListener('message', (e) => window.messages.push(e.data));</script>"
                f'<iframe src="{src}" sandbox="allow-scripts" style="width:800px;height:600px"></iframe>'
            )
            return self._send(html.encode(), TYPES[".html"], {})
        self._send(b"not found", "text/plain", {}, status=404)

    def _send(self, body: bytes, content_type: str, headers: dict, status: int = 200):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def kit_server():
    ensure_vendored()
    server = KitServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    from explainer.render_check.browser import launch_options

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_options())
        yield browser
        browser.close()

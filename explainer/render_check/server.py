"""A small threaded HTTP server on 127.0.0.1 that serves static/ and pages under test.

The render check loads each page over real HTTP with the production headers, so the browser
enforces the same sandbox and policy a learner gets and every violation shows up.
"""

from __future__ import annotations

import mimetypes
import os
import secrets
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from explainer.pages.policy import STATIC_CORS_HEADERS, page_headers

PAGE_PREFIX = "/__page__/"
STATIC_PREFIX = "/static/"
mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("text/javascript", ".mjs")


class PageServer:
    """Serves registered HTML documents at /__page__/<token>, and static/ at /static/.

    static/ comes from `static_root`, or, with `upstream` (an origin such as a running app), from
    that origin's /static/, relayed: the page then loads the assets that server really serves.
    """

    def __init__(self, static_root: Path, upstream: str | None = None) -> None:
        self.static_root = Path(static_root).resolve()
        self.upstream = upstream.rstrip("/") if upstream else None
        self._pages: dict[str, str] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="render-check-http", daemon=True)
        self._thread.start()

    def add_page(self, html: str) -> str:
        """Register a document and return its URL; `remove_page` forgets it."""
        token = secrets.token_urlsafe(12)
        with self._lock:
            self._pages[token] = html
        return f"{self.origin}{PAGE_PREFIX}{token}"

    def remove_page(self, url: str) -> None:
        token = urlsplit(url).path.removeprefix(PAGE_PREFIX)
        with self._lock:
            self._pages.pop(token, None)

    def page_html(self, token: str) -> str | None:
        with self._lock:
            return self._pages.get(token)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                path = unquote(urlsplit(self.path).path)
                if path.startswith(PAGE_PREFIX):
                    html = server.page_html(path.removeprefix(PAGE_PREFIX))
                    if html is None:
                        return self._send(404, b"no such page", {"Content-Type": "text/plain"})
                    headers = page_headers(asset_origins=[server.origin], frame_ancestors=[server.origin])
                    return self._send(200, html.encode("utf-8"), headers)
                if path.startswith(STATIC_PREFIX):
                    return self._static(path.removeprefix(STATIC_PREFIX))
                if path == "/favicon.ico":
                    return self._send(204, b"", {})
                return self._send(404, b"not found", {"Content-Type": "text/plain"})

            def _static(self, relative: str) -> None:
                if server.upstream:
                    return self._relay(f"{server.upstream}{STATIC_PREFIX}{relative}")
                # Normalised, not resolved: a symlinked folder inside static/ (a vendored library) is
                # served, while ".." can still not climb out of it.
                target = Path(os.path.normpath(server.static_root / relative))
                if not target.is_relative_to(server.static_root) or not target.is_file():
                    return self._send(404, b"not found", {"Content-Type": "text/plain"})
                content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
                headers = {"Content-Type": content_type, "Cache-Control": "max-age=3600", **STATIC_CORS_HEADERS}
                self._send(200, target.read_bytes(), headers)

            def _relay(self, url: str) -> None:
                try:
                    with urllib.request.urlopen(url, timeout=10) as upstream:
                        status, body = upstream.status, upstream.read()
                        content_type = upstream.headers.get("Content-Type", "application/octet-stream")
                except urllib.error.HTTPError as exc:
                    status, body, content_type = exc.code, b"", "text/plain"
                except OSError as exc:
                    status, body, content_type = 502, str(exc).encode(), "text/plain"
                self._send(status, body, {"Content-Type": content_type, **STATIC_CORS_HEADERS})

            def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:  # noqa: A002
                pass  # one line per asset would drown the worker log

        return Handler

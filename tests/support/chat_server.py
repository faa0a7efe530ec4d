"""A small real HTTP server speaking the chat-completions stream, for the faults a real server rarely
shows on demand: a refused key, a 5xx, malformed chunks, a reply without html, a stalled stream, a
context too short for the prompt (`short_context`: a prompt with the worked example, more than 3 messages;
`no_context`: every prompt), refused with vLLM's words.

`ChatServer(mode)` serves on a free loopback port in a thread; `.base_url` is its API root.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Sky</title></head><body>\n'
        '<script type="importmap">{"imports": {"three": "/static/vendor/three/three.module.js", '
        '"three/addons/": "/static/vendor/three/addons/", "kit": "/static/kit/kit.js"}}</script>\n'
        '<script type="module">\nimport { start } from "kit";\nconst app = start({ title: "Sky" });\n'
        'app.part(app.sphere({}), { title: "Air" });\napp.slider({ label: "Sun" }, () => {});\n</script>\n'
        "</body></html>")
MODES = ("page", "prose", "unauthorized", "server_error", "malformed", "stall", "endless", "short_context",
         "no_context")
CONTEXT_REFUSAL = ("This model's maximum context length is 4096 tokens. However, you requested 5349 tokens "
                   "(5229 in the messages, 120 in the completion). Please reduce the length of the messages or "
                   "completion.")


def _chunk(content: str) -> bytes:
    data = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": content}}]}
    return f"data: {json.dumps(data)}\n\n".encode()


class ChatServer:
    def __init__(self, mode: str = "page", stall_s: float = 5.0):
        assert mode in MODES, mode
        self.mode, self.stall_s, self.requests = mode, stall_s, []
        self.closed_early = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"body": body, "auth": self.headers.get("Authorization")})
                if server.mode == "unauthorized":
                    return self._json(401, {"error": {"message": "invalid api key"}})
                if server.mode == "server_error":
                    return self._json(503, {"error": {"message": "overloaded"}})
                if server.mode == "no_context" or (server.mode == "short_context" and len(body["messages"]) > 3):
                    return self._json(400, {"object": "error", "message": CONTEXT_REFUSAL, "code": 400})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    self._stream()
                except (BrokenPipeError, ConnectionResetError):
                    server.closed_early.set()

            def _stream(self):
                mode = server.mode
                if mode == "malformed":
                    self.wfile.write(_chunk("<!doctype html>") + b"data: {not json\n\n")
                elif mode == "stall":
                    self.wfile.write(_chunk("<!doctype html>"))
                    self.wfile.flush()
                    time.sleep(server.stall_s)
                elif mode == "endless":
                    for _ in range(2000):
                        self.wfile.write(_chunk("<p>more</p>"))
                        self.wfile.flush()
                        time.sleep(0.005)
                else:
                    text = "Here is a page about the sky." if mode == "prose" else \
                        f"Here is your page:\n```html\n{PAGE}\n```\nEnjoy!"
                    for i in range(0, len(text), 20):
                        self.wfile.write(_chunk(text[i:i + 20]))
                    usage = {"completion_tokens": 42, "prompt_tokens": 7, "total_tokens": 49}
                    self.wfile.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _json(self, status: int, data: dict):
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

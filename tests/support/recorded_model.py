"""A recorded model: an OpenAI-compatible chat server (a test double, never a default) that streams pages a
capable model wrote for the app's own prompts, chosen by the request.

The reply is picked from the last user message that `chat_prompt.build_messages` builds: a new question,
a follow-up ("Revise it: ...") or a repair ("The page below was written for the question ..."). Recorded
replies (`tests/data/recorded/`) are streamed one token a chunk (the demo checkpoint's tokenizer), then
the usage chunk real servers send (`prompt_tokens`, `completion_tokens`, and `cached_tokens`: the prompt's
longest prefix shared with an earlier request, as a prefix cache would hit), `finish_reason` and `[DONE]`.
The server honours `max_tokens` (cut with `finish_reason: "length"`). A question not recorded is answered
with the worked example's page from the prompt, as a model that copies its example would.

Provider faults are asked for by question (`FAULTS`): 401, 404 (unknown model), 429 with `Retry-After`
(always, or once), 500, a stream that stops mid-page, a stall, a slow stream (for Stop). `pause()` and
`resume()` close and reopen the port (connection refused).

A second opinion (`model_worker/backends/second_opinion.py`: "Does this lesson answer this question?") is
answered, not streamed, with the word recorded for its question (`JUDGES`; `SLOW_JUDGES` answer after
`stall_s`), and a question not recorded gets a reply that is neither yes nor no.

Run it alone for `pagebench`: `python -m tests.support.recorded_model --port 8011`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "data" / "recorded"
# A capable model asked an in-library question writes a page like the library's own; the recording is that page.
CORPUS = ROOT / "model_worker" / "corpus" / "pages"
TOKENIZER = ROOT / "model_worker" / "checkpoints" / "clover-demo" / "tokenizer.json"
MODEL = "recorded-capable-model"


@dataclass(frozen=True)
class Recording:
    file: str | None  # a page under tests/data/recorded/ (or `CORPUS / name`); None: no page at all
    wrap: str = "fenced"  # "fenced": one ```html block | "prose": words around the block | "bare": no fence
    cut: bool = False  # the page without its closing </html>


# New questions, as the learner asks them (in and outside the library, English and Chinese).
ASKS = {
    "Why do some volcanoes explode while others just let lava flow out?": Recording(str(CORPUS / "volcanoes.html")),
    "火山是怎样喷发的？": Recording(str(CORPUS / "zh-volcanoes.html")),
    "What causes the northern lights?": Recording("northern-lights.html", wrap="prose"),
    "台风是怎么形成的？": Recording("typhoon-zh.html"),
    "Why does the sky glow green near the poles at night?": Recording("northern-lights.html"),
    # broken replies: a runtime error (fixed by its repair below), a page cut before </html>, prose alone
    "What makes the aurora glow green?": Recording("northern-lights-runtime-error.html"),
    "Why is the aurora sometimes red?": Recording("northern-lights.html", cut=True),
    "Can you explain the aurora in words only?": Recording(None),
    "How do solar storms reach Earth?": Recording("northern-lights.html", wrap="bare"),
}
FOLLOW_UPS = {"make the magma runnier and show it at night": Recording("volcanoes-runny-night.html")}
REPAIRS = {"What makes the aurora glow green?": Recording("northern-lights.html")}
# Faults by question: the same words in a test and here.
FAULTS = {
    "fault: refused key": "unauthorized",
    "fault: unknown model": "unknown_model",
    "fault: rate limited": "rate_limited",
    "fault: rate limited once": "rate_limited_once",
    "fault: server error": "server_error",
    "fault: stream breaks": "broken_stream",
    "fault: stall": "stall",
    "fault: slow": "slow",
    "fault: too long": "too_long",
}
# Second opinions by question: does the lesson the router was unsure of (named in the prompt) answer it?
JUDGES = {
    "Why does the sky glow green near the poles at night?": "No.",  # routed to the sky's colour, just above
    "Why do we see lightning before thunder?": "Yes",  # routed to the page on sound, just above the threshold
    "台风是怎么形成的？": "No",
    "What makes the aurora glow green?": "No",
    "Why is the aurora sometimes red?": "No",
    "How do solar storms reach Earth?": "no",
    "judge: rambles": "Well, partly",
}
SLOW_JUDGES = {"judge: slow", "How does a rocket work in space?"}  # answered "yes" after `stall_s`
JUDGE = re.compile(r"\nQuestion: (.*)\n\nDoes this lesson answer this question\? Answer yes or no\.$", re.DOTALL)
RETRY_AFTER_S = 1
REPAIR = re.compile(r'^The page below was written for the question "(.*?)", but it fails', re.DOTALL)
FOLLOW_UP = re.compile(r"\n\nRevise it: (.*)\nAnswer with the whole revised page", re.DOTALL)


@cache
def _tokenizer():
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(TOKENIZER))


def tokens(text: str) -> list[str]:
    """`text` cut into the demo tokenizer's tokens (whatever falls between offsets goes with the next)."""
    pieces, last = [], 0
    for _start, end in _tokenizer().encode(text, add_special_tokens=False).offsets:
        if end > last:
            pieces.append(text[last:end])
            last = end
    if last < len(text):
        pieces.append(text[last:])
    return pieces


def request_kind(messages: list[dict]) -> tuple[str, str]:
    """("ask" | "follow_up" | "repair" | "judge", the learner's question) of a request `build_messages` (or the
    second opinion's `judge_messages`) built."""
    ask = messages[-1]["content"]
    if match := JUDGE.search(ask):
        return "judge", match.group(1)
    if match := REPAIR.match(ask):
        return "repair", match.group(1)
    if match := FOLLOW_UP.search(ask):
        return "follow_up", match.group(1).strip()
    return "ask", ask.strip()


def recorded_reply(messages: list[dict]) -> str:
    """The reply the recorded model gives to these messages."""
    kind, question = request_kind(messages)
    recording = {"ask": ASKS, "follow_up": FOLLOW_UPS, "repair": REPAIRS}[kind].get(question)
    if recording is None:  # not recorded: the worked example's page, as a model that copies it would
        examples = [m["content"] for m in messages[1:-1] if m["role"] == "assistant"]
        return examples[0] if examples else "I cannot write a page for that."
    if recording.file is None:
        return "The aurora is light given off by oxygen and nitrogen high in the air when particles from the Sun hit them."
    page = (RECORDED / recording.file).read_text().strip()
    if recording.cut:
        page = page[: page.rindex("</script>")]
    if recording.wrap == "bare":
        return page
    block = f"```html\n{page}\n```"
    if recording.wrap == "prose":
        return f"Here is an interactive page that answers the question.\n\n{block}\n\nOpen the parts to read more."
    return block


def _sse(data: dict | str) -> bytes:
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def _chunk(content: str | None, finish: str | None = None) -> bytes:
    delta = {"content": content} if content is not None else {}
    return _sse({"id": "chatcmpl-recorded", "object": "chat.completion.chunk", "model": MODEL,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


class RecordedModel:
    """The server on a loopback port (`port=0`: a free one), in a thread; `.base_url` is its API root."""

    def __init__(self, port: int = 0, *, stall_s: float = 8.0, slow_tokens_per_s: float = 40.0):
        self.stall_s, self.slow_tokens_per_s = stall_s, slow_tokens_per_s
        self.requests: list[dict] = []
        self.closed_early = threading.Event()
        self._prompts: list[str] = []
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self.httpd = self._bind(port)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def _bind(self, port: int) -> ThreadingHTTPServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                kind, question = request_kind(body["messages"])
                server.requests.append({"body": body, "kind": kind, "question": question})
                if kind == "judge":
                    return self._judge(question)
                fault = FAULTS.get(question)
                with server._lock:
                    first = question not in server._seen
                    server._seen.add(question)
                if fault == "unauthorized":
                    return self._json(401, {"error": {"message": "Incorrect API key provided.", "type":
                                                      "invalid_request_error", "code": "invalid_api_key"}})
                if fault == "unknown_model":
                    return self._json(404, {"error": {"message": f"The model `{body['model']}` does not exist.",
                                                      "type": "invalid_request_error", "code": "model_not_found"}})
                if fault == "rate_limited" or (fault == "rate_limited_once" and first):
                    return self._json(429, {"error": {"message": "Rate limit reached for requests.",
                                                      "type": "requests", "code": "rate_limit_exceeded"}},
                                      headers={"Retry-After": str(RETRY_AFTER_S)})
                if fault == "server_error":
                    return self._json(500, {"error": {"message": "The server had an error while processing "
                                                                 "your request.", "type": "server_error"}})
                reply = recorded_reply(body["messages"])
                if fault == "too_long":
                    reply = "```html\n" + (RECORDED / "northern-lights.html").read_text() * 4
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                try:
                    self._stream(body, reply, fault)
                except (BrokenPipeError, ConnectionResetError):
                    server.closed_early.set()
                self.close_connection = True

            def _stream(self, body: dict, reply: str, fault: str | None):
                pieces = tokens(reply)
                limit = body.get("max_tokens") or len(pieces)
                finish = "length" if len(pieces) > limit else "stop"
                pieces = pieces[:limit]
                if fault == "broken_stream":
                    pieces = pieces[: len(pieces) // 2]
                self.wfile.write(_sse({"id": "chatcmpl-recorded", "object": "chat.completion.chunk", "model": MODEL,
                                       "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                    "finish_reason": None}]}))
                for i, piece in enumerate(pieces):
                    self.wfile.write(_chunk(piece))
                    if fault == "slow":
                        self.wfile.flush()
                        time.sleep(1 / server.slow_tokens_per_s)
                    elif fault == "stall" and i == 20:
                        self.wfile.flush()
                        time.sleep(server.stall_s)
                    elif i % 64 == 0:
                        self.wfile.flush()
                if fault == "broken_stream":  # the connection drops: no finish_reason, no usage, no [DONE]
                    self.wfile.flush()
                    return
                self.wfile.write(_chunk(None, finish))
                if (body.get("stream_options") or {}).get("include_usage"):
                    prompt, cached = server._prompt_tokens(body["messages"])
                    self.wfile.write(_sse({"id": "chatcmpl-recorded", "object": "chat.completion.chunk",
                                           "model": MODEL, "choices": [], "usage": {
                                               "prompt_tokens": prompt, "completion_tokens": len(pieces),
                                               "total_tokens": prompt + len(pieces),
                                               "prompt_tokens_details": {"cached_tokens": cached}}}))
                self.wfile.write(_sse("[DONE]"))
                self.wfile.flush()

            def _judge(self, question: str):
                if question in SLOW_JUDGES:
                    time.sleep(server.stall_s)
                reply = "Yes" if question in SLOW_JUDGES else JUDGES.get(question, "It is hard to say.")
                try:
                    self._json(200, {"id": "chatcmpl-recorded", "object": "chat.completion", "model": MODEL,
                                     "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                                  "finish_reason": "stop"}]})
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _json(self, status: int, data: dict, headers: dict | None = None):
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

        class Server(ThreadingHTTPServer):
            allow_reuse_address = True
            daemon_threads = True

        return Server(("127.0.0.1", port), Handler)

    def _prompt_tokens(self, messages: list[dict]) -> tuple[int, int]:
        """(the prompt's tokens, how many of them begin as an earlier prompt began: a prefix cache's hit)."""
        text = "".join(f"<|{m['role']}|>{m['content']}" for m in messages)
        with self._lock:
            shared = max((len(os.path.commonprefix([text, seen])) for seen in self._prompts), default=0)
            self._prompts.append(text)
        return len(tokens(text)), len(tokens(text[:shared])) if shared else 0

    def __enter__(self) -> RecordedModel:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def pause(self) -> None:
        """Stop listening: a connection to the port is refused until `resume()`."""
        self.__exit__()

    def resume(self) -> None:
        self.httpd = self._bind(self.port)
        self.__enter__()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8011)
    args = parser.parse_args()
    with RecordedModel(args.port) as server:
        print(f"recorded model at {server.base_url} (MODEL_NAME={MODEL})", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()

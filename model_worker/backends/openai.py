"""A model served over the OpenAI-compatible chat API (vLLM, SGLang, `transformers serve`, ...).

Streaming chat completions over HTTP (server-sent events), prompted with the kit (`chat_prompt`).
Connect and read timeouts; a failed connection is retried (nothing was sent, so nothing is repeated), and
a 429 after the wait its `Retry-After` asks for (bounded); a cancel closes the stream, which tells the
server to stop. Failures become `BackendError`s: `model_unavailable` for a server that is down, slow,
refuses the key (401/403), does not serve the model (404), stays rate-limited, fails (5xx) or breaks off
its reply, and `bad_reply` for chunks that are not the API's JSON, a reply cut at `max_tokens` or one with
no html page in it. A server that
refuses the prompt as longer than its context (vLLM, SGLang and `transformers serve` say so in a 400) is
asked again without the worked example, as the transformers backend does; refused again, the page is
`prompt_too_long`.
"""

from __future__ import annotations

import json
import logging
import re
import time

try:  # the client the `openai` package ships with; plain httpx has the same API
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx

from model_worker.backends.base import BackendError, PageResult, PageSink
from model_worker.backends.chat_prompt import build_messages
from model_worker.backends.reply import page_from_reply, page_problems
from model_worker.backends.second_opinion import MAX_TOKENS, judge_messages, verdict_from_reply
from model_worker.backends.streaming import TokenBlocks
from model_worker.config import backend_capabilities
from model_worker.contract.pages import LessonQuestion, PageRequest

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0
CONNECT_RETRIES = 2  # after the first try
RETRY_BACKOFF_S = 0.5
RATE_LIMIT_RETRIES = 2  # a 429 is asked again this often, after the wait it names
RATE_LIMIT_WAIT_S = 10.0  # the longest wait one 429 is given, whatever its Retry-After says
REPAIR_TEMPERATURE = 0.7
# How servers word a prompt longer than the model's context in their 400 (vLLM: "maximum context length",
# `transformers serve`: "--max-model-len", SGLang: "longer than the model's context length").
CONTEXT_REFUSAL = re.compile(r"context length|context window|max[-_ ]model[-_ ]len|too many tokens|prompt is too long",
                             re.IGNORECASE)


class _PromptTooLong(BackendError):
    def __init__(self, message: str):
        super().__init__("prompt_too_long", message)


class OpenAIBackend:
    """`PageBackend` over an OpenAI-compatible server's `/chat/completions`, streamed."""

    capabilities = backend_capabilities("openai")

    @classmethod
    def from_settings(cls, settings) -> OpenAIBackend:
        return cls(settings.base_url, settings.model_name, api_key=settings.api_key,
                   read_timeout_s=settings.timeout_s, max_new_tokens=settings.max_new_tokens)

    def __init__(self, base_url: str, model: str = "", *, api_key: str = "", connect_timeout_s: float = CONNECT_TIMEOUT_S,
                 read_timeout_s: float = 300.0, retries: int = CONNECT_RETRIES, max_new_tokens: int | None = None):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"MODEL_BASE_URL={base_url!r} must be an http(s) URL such as http://127.0.0.1:8000/v1")
        self.base_url = base_url.rstrip("/")
        self.model, self.retries, self.max_new_tokens = model, retries, max_new_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(base_url=self.base_url, headers=headers,
                                   timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s))
        self.read_timeout_s = read_timeout_s

    def generate_page(self, request: PageRequest, sink: PageSink) -> PageResult:
        body = {"model": self.model or self._served_model(), "stream": True,
                "stream_options": {"include_usage": True}, "temperature": 0.0}
        if request.repair is not None:  # the same prompt would give the same reply: sample, seeded
            body.update(temperature=REPAIR_TEMPERATURE, seed=request.repair.attempt)
        if self.max_new_tokens:
            body["max_tokens"] = self.max_new_tokens
        blocks = TokenBlocks(sink)
        try:
            usage, finish = self._stream({**body, "messages": build_messages(request)}, blocks)
        except _PromptTooLong as exc:  # refused before a token was written: ask again, shorter
            log.info("the prompt is too long for %s with the worked example (%s); asking without it", self.base_url, exc)
            usage, finish = self._stream({**body, "messages": build_messages(request, examples=False)}, blocks)
        if not blocks.stopped:
            blocks.flush()
        stats = blocks.stats(forwards=None, tokens=usage)
        if blocks.stopped:
            return PageResult(html="", stats=stats, stopped=True)
        if finish is None:  # neither a finish_reason nor [DONE]: the connection dropped mid-reply
            raise BackendError("model_unavailable", f"The model server at {self.base_url} broke off the reply "
                                                    f"after {stats['tokens']} tokens.", stats)
        if finish == "length":
            raise BackendError("bad_reply", f"The model reached its limit of {self.max_new_tokens or stats['tokens']} "
                                            "tokens (MODEL_MAX_NEW_TOKENS) before the page was finished.", stats)
        html = page_from_reply("".join(blocks.text))
        if not html:
            raise BackendError("bad_reply", f"The model's reply held no html page ({stats['tokens']} tokens).", stats)
        problems = page_problems(html)
        if problems:
            raise BackendError("bad_reply", f"The model's page is incomplete: {'; '.join(problems)}.", stats)
        return PageResult(html=html, stats=stats)

    def judge(self, ask: LessonQuestion, *, timeout_s: float) -> str:
        """The model's second opinion on a lesson for a question: "yes", "no", or "unknown" when the server is
        slow (each wait at most `timeout_s`), fails, or answers neither. One try: the learner is waiting."""
        timeout = httpx.Timeout(timeout_s)
        try:
            model = self.model
            if not model:
                response = self.client.get("/models", timeout=timeout)
                response.raise_for_status()
                model = response.json()["data"][0]["id"]
            body = {"model": model, "messages": judge_messages(ask), "max_tokens": MAX_TOKENS, "temperature": 0.0,
                    "stream": False}
            response = self.client.post("/chat/completions", json=body, timeout=timeout)
            response.raise_for_status()
            reply = response.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            log.info("no second opinion from %s: %s", self.base_url, exc)
            return "unknown"
        return verdict_from_reply(reply if isinstance(reply, str) else "")

    def _served_model(self) -> str:
        """The server's first model, when MODEL_NAME names none."""
        response = self._request(lambda: self.client.get("/models"))
        try:
            return response.json()["data"][0]["id"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise BackendError("bad_reply", f"{self.base_url}/models named no model; set MODEL_NAME") from None
        finally:
            response.close()

    def _stream(self, body: dict, blocks: TokenBlocks) -> tuple[int | None, str | None]:
        """Send the request and feed the reply's text into `blocks`: (the server's token count if it gave one,
        how the reply ended: its finish_reason, "done" for a bare [DONE], None if it broke off)."""
        response = self._request(lambda: self.client.send(
            self.client.build_request("POST", "/chat/completions", json=body), stream=True))
        usage = finish = None
        try:  # leaving early (a cancel) closes the connection: the server stops writing
            try:
                for line in response.iter_lines():
                    data = _data(line)
                    if data is None:
                        continue
                    if data == "[DONE]":
                        finish = finish or "done"
                        break
                    text, tokens, reason = _chunk(data)
                    usage = tokens if tokens is not None else usage
                    finish = reason or finish
                    if text and not blocks.add(text, 1):
                        break
            except httpx.TimeoutException:
                raise BackendError("model_unavailable", f"The model server at {self.base_url} sent nothing for "
                                                        f"{self.read_timeout_s:g} s.", blocks.stats(forwards=None)) from None
            except httpx.TransportError as exc:
                raise BackendError("model_unavailable", f"The model server at {self.base_url} broke off the "
                                                        f"reply: {exc}", blocks.stats(forwards=None)) from None
        finally:
            response.close()
        return usage, finish

    def _request(self, send) -> httpx.Response:
        """`send()` with retries on connection failures and (after the wait it asks for) a 429; a refused or
        failed answer is a BackendError."""
        limited = 0
        attempt = 0
        while True:
            try:
                response = send()
                if response.status_code == 429 and limited < RATE_LIMIT_RETRIES:
                    limited += 1
                    wait = _retry_after(response.headers.get("Retry-After"), RETRY_BACKOFF_S * 2**limited)
                    response.close()
                    log.warning("model server %s is rate-limiting (429); asking again in %.1f s", self.base_url, wait)
                    time.sleep(wait)
                    continue
                break
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt == self.retries:
                    raise BackendError("model_unavailable", f"The model server at {self.base_url} cannot be "
                                                            f"reached: {exc}") from None
                log.warning("model server %s unreachable (%s); retrying", self.base_url, exc)
                time.sleep(RETRY_BACKOFF_S * 2**attempt)
                attempt += 1
            except httpx.TimeoutException:
                raise BackendError("model_unavailable", f"The model server at {self.base_url} did not answer "
                                                        f"within {self.read_timeout_s:g} s.") from None
        if response.status_code >= 400:
            response.read()
            response.close()
            detail = response.text[:300].strip()
            if response.status_code in (401, 403):
                why = f"refused the API key ({response.status_code}); check MODEL_API_KEY"
            elif response.status_code == 404:
                why = f"does not serve the model {self.model!r} (404); check MODEL_NAME: {detail}"
            elif response.status_code == 429:
                why = f"is still rate-limiting after {limited} waits (429): {detail}"
            elif response.status_code >= 500:
                why = f"failed ({response.status_code}): {detail}"
            else:
                why = f"refused the request ({response.status_code}): {detail}"
                if response.status_code == 400 and CONTEXT_REFUSAL.search(detail):
                    raise _PromptTooLong(f"The model server at {self.base_url} {why}")
            raise BackendError("model_unavailable", f"The model server at {self.base_url} {why}")
        return response


def _data(line: str) -> str | None:
    """The payload of an SSE `data:` line; None for comments, blank lines and other fields."""
    if not line.startswith("data:"):
        return None
    return line[5:].strip()


def _retry_after(header: str | None, default: float) -> float:
    """The seconds a 429's `Retry-After` asks for (a number; a date counts as the default), at most
    RATE_LIMIT_WAIT_S."""
    try:
        wait = float(header) if header else default
    except ValueError:
        wait = default
    return min(max(wait, 0.0), RATE_LIMIT_WAIT_S)


def _chunk(data: str) -> tuple[str, int | None, str | None]:
    """(text, completion tokens the chunk reports, its finish_reason) of one streamed chunk; `bad_reply` if
    it is malformed."""
    try:
        chunk = json.loads(data)
    except ValueError:
        raise BackendError("bad_reply", f"The model server streamed a chunk that is not JSON: {data[:120]!r}") from None
    if not isinstance(chunk, dict):
        raise BackendError("bad_reply", f"The model server streamed a chunk that is not an object: {data[:120]!r}")
    if "error" in chunk:
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise BackendError("model_unavailable", f"The model server reported an error: {str(message)[:300]}")
    usage = chunk.get("usage")
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    choices = chunk.get("choices")
    if choices is None and tokens is not None:
        return "", tokens, None
    if not isinstance(choices, list):
        raise BackendError("bad_reply", f"The model server streamed a chunk without choices: {data[:120]!r}")
    if not choices:
        return "", tokens, None
    delta = choices[0].get("delta") if isinstance(choices[0], dict) else None
    if not isinstance(delta, dict):
        raise BackendError("bad_reply", f"The model server streamed a choice without a delta: {data[:120]!r}")
    content = delta.get("content") or ""
    if not isinstance(content, str):
        raise BackendError("bad_reply", f"The model server streamed content that is not text: {data[:120]!r}")
    finish = choices[0].get("finish_reason")
    return content, tokens, finish if isinstance(finish, str) else None

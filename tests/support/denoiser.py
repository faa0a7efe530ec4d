"""A deterministic stand-in for the model, for tests only: it "denoises" a fixed page block by block.

Each block of `BLOCK` pieces starts fully masked and resolves `PER_STEP` pieces a step, in a fixed
scrambled order, with a short sleep per step. Questions may carry test switches:
`[[slow]]` (longer steps, for cancel tests), `[[fail]]` (the backend raises) and `[[broken]]` (the page
throws in the browser, so it fails its render check, until the second repair asks for it again).
"""

from __future__ import annotations

import html
import time

from model_worker.backends.base import PageResult, PageSink
from model_worker.contract.pages import BackendCapabilities, PageRequest

BLOCK = 8
PER_STEP = 3
STEP_S = 0.005
SLOW_STEP_S = 0.12  # about 10 s a page: room for a busy machine to cancel or leave mid-way


def page_for(request: PageRequest) -> str:
    """The page this backend writes for a request; follow-ups say how long the previous page was."""
    question = html.escape(request.question.replace("[[slow]]", "").strip())
    previous = len(request.previous_page) if request.previous_page else 0
    if "[[broken]]" in request.question:
        return kit_page(question, broken=request.repair is None or request.repair.attempt < 2)
    return (
        "<!doctype html>\n<html lang=\"" + request.lang + "\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta name=\"previous-page-chars\" content=\"{previous}\">\n"
        f"<title>{question}</title>\n"
        "<style>body{margin:0;font:16px system-ui;background:#0b1020;color:#e8ecff}"
        "canvas{display:block;width:100%;height:60vh}p{padding:0 1em}</style>\n</head>\n<body>\n"
        f"<h1>{question}</h1>\n<canvas id=\"scene\"></canvas>\n"
        "<p>Drag to turn the scene. The orbit shows one body circling another.</p>\n"
        "<script>\nconst c=document.getElementById('scene');const g=c.getContext('2d');\n"
        "function draw(t){c.width=c.clientWidth;c.height=c.clientHeight;g.fillStyle='#fc3';"
        "g.beginPath();g.arc(c.width/2,c.height/2,30,0,7);g.fill();g.fillStyle='#6cf';"
        "g.beginPath();g.arc(c.width/2+120*Math.cos(t/500),c.height/2+60*Math.sin(t/500),10,0,7);"
        "g.fill();requestAnimationFrame(draw)}\nrequestAnimationFrame(draw);\n</script>\n</body>\n</html>\n"
    )


def kit_page(title: str, *, broken: bool) -> str:
    """A small kit page that passes the render check, or (`broken`) one whose script throws."""
    fault = "notDefinedAnywhere();\n" if broken else ""
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>" + title + "</title></head>\n"
        "<body>\n<script type=\"importmap\">{\"imports\": {\"three\": \"/static/vendor/three/three.module.js\", "
        "\"three/addons/\": \"/static/vendor/three/addons/\", \"kit\": \"/static/kit/kit.js\"}}</script>\n"
        "<script type=\"module\">\nimport { start } from \"kit\";\n"
        f"const app = start({{ title: {title!r}, intro: \"A planet and its moon.\" }});\n{fault}"
        "const planet = app.sphere({ radius: 1.5, color: \"#3a7bd5\" });\n"
        "const moon = app.sphere({ radius: 0.4, color: \"#cccccc\", at: [3, 0, 0] });\n"
        "app.part(planet, { title: \"Planet\", text: \"A world.\" });\n"
        "app.part(moon, { title: \"Moon\", text: \"It circles the planet.\" });\n"
        "app.slider({ label: \"Orbit\", min: 0, max: 6.28, value: 0 }, (a) => moon.position.set(3 * Math.cos(a), 0, "
        "3 * Math.sin(a)));\n</script>\n</body>\n</html>\n"
    )


def pieces_of(text: str) -> list[str]:
    """Split text into token-like pieces of up to four characters."""
    return [text[i : i + 4] for i in range(0, len(text), 4)]


class DeterministicDenoiser:
    """Implements `PageBackend` without a model."""

    def __init__(self, path=None, device: str = "cpu", **_):
        self.path, self.device = path, device

    def generate_page(self, request: PageRequest, sink: PageSink) -> PageResult:
        if "[[fail]]" in request.question:
            raise RuntimeError("the test denoiser was asked to fail")
        step_s = SLOW_STEP_S if "[[slow]]" in request.question else STEP_S
        page = page_for(request)
        pieces = pieces_of(page)
        started = time.monotonic()
        forwards = 0
        first_block_s = None
        written: list[str] = []
        for block, start in enumerate(range(0, len(pieces), BLOCK)):
            if sink.should_stop():
                return PageResult(html="".join(written), stats=self._stats(written, forwards, started,
                                                                             first_block_s), stopped=True)
            target = pieces[start : start + BLOCK]
            # A fixed scramble, so positions fill out of order the way a denoiser's do.
            order = sorted(range(len(target)), key=lambda i: (i * 5) % len(target))
            draft: list[str | None] = [None] * len(target)
            for step in range(0, len(order), PER_STEP):
                for i in order[step : step + PER_STEP]:
                    draft[i] = target[i]
                forwards += 1
                time.sleep(step_s)
                sink.on_draft(block, list(draft))
            text = "".join(target)
            written.append(text)
            sink.on_commit(block, text, len(target))
            if first_block_s is None:
                first_block_s = time.monotonic() - started
        return PageResult(html=page, stats=self._stats(written, forwards, started, first_block_s))

    @staticmethod
    def _stats(written: list[str], forwards: int, started: float, first_block_s: float | None) -> dict:
        seconds = time.monotonic() - started
        tokens = sum(len(pieces_of(text)) for text in written)
        return {
            "tokens": tokens,
            "forwards": forwards,
            "tokens_per_forward": round(tokens / forwards, 2) if forwards else 0.0,
            "forwards_per_s": round(forwards / seconds, 1) if seconds else 0.0,
            "tokens_per_s": round(tokens / seconds, 1) if seconds else 0.0,
            "first_block_s": round(first_block_s or 0.0, 3),
            "seconds": round(seconds, 3),
        }


class OpenDomainDenoiser(DeterministicDenoiser):
    """The deterministic denoiser declaring itself open-domain, as real-model backends will."""

    capabilities = BackendCapabilities(open_domain=True, revises_pages=True, streams="drafts", context=0)

"""The page inside a model's reply, and whether it is a page at all.

A chat model wraps its page in prose and code fences; `page_from_reply` takes the html document out
and `page_problems` says what keeps it from being a complete kit page. Both are pure text functions.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*(?:html|HTML)?[ \t]*\n(.*?)(?:\n```|\Z)", re.DOTALL)
_DOC_START = re.compile(r"<!doctype html|<html[\s>]", re.IGNORECASE)
_DOC_END = re.compile(r"</html\s*>", re.IGNORECASE)
_BODY_OR_SCRIPT = re.compile(r"<(body|script)[\s>]", re.IGNORECASE)
_KIT_IMPORT = re.compile(r"""from\s+["']kit["']|["']kit["']\s*:\s*["'][^"']*kit\.js["']""")


def page_from_reply(text: str) -> str:
    """The html document in a reply: the fenced block holding one if there is one, else the text from
    the first `<!doctype html>`/`<html>` to the last `</html>`. "" when the reply holds no document."""
    candidates = [block for block in _FENCE.findall(text) if _DOC_START.search(block)] or [text]
    for candidate in candidates:
        start = _DOC_START.search(candidate)
        if not start:
            continue
        body = candidate[start.start():]
        ends = list(_DOC_END.finditer(body))
        if ends:
            body = body[: ends[-1].end()]
        return body.strip() + "\n"
    return ""


def page_problems(html: str, *, kit: bool = True) -> list[str]:
    """What keeps `html` from being a complete page (empty when it is one). `kit`: it must also import
    the kit, as the kit-grounded prompt asks."""
    problems = []
    if not _DOC_START.search(html):
        problems.append("no <!doctype html> or <html> start")
    if not _DOC_END.search(html):
        problems.append("no closing </html>: the page is cut off")
    if not _BODY_OR_SCRIPT.search(html):
        problems.append("no <body> or <script>: the page shows nothing")
    if kit and not _KIT_IMPORT.search(html):
        problems.append('no kit import (an import map naming "kit" and `import { start } from "kit"`)')
    return problems

"""What makes an HTML page acceptable to a class library before it is render-checked: size, form, no remote loads."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

MAX_PAGE_BYTES = 2 * 1024 * 1024
_DOCUMENT_START = re.compile(r"\A\s*(<!--.*?-->\s*)*<(!doctype\s+html|html)[\s>]", re.I | re.S)
_KIT_IMPORT = re.compile(r"""["']kit["']\s*:|from\s+["']kit["']""")
# Module specifiers in a script: import ... from "x", import "x", import("x"), export ... from "x".
_SPECIFIERS = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)(["'`])([^"'`]+)\1""")
_CSS_URLS = re.compile(r"""(?:@import\s+|url\(\s*)(["']?)([^"')\s]+)\1""", re.I)


def page_size_problem(html: str) -> str | None:
    size = len(html.encode("utf-8"))
    if size > MAX_PAGE_BYTES:
        return f"the page is {size / 1024 / 1024:.1f} MB; the limit is 2 MB"
    return None


def page_form_problem(html: str) -> str | None:
    """Why `html` is not a kit page (an HTML document with a module script importing the kit), or None."""
    if not html.strip():
        return "the page is empty"
    if not _DOCUMENT_START.match(html):
        return "not an HTML page: it must start with <!doctype html> or <html>"
    if "<script" not in html.lower() or not _KIT_IMPORT.search(html):
        return "the page must be written against the page kit: an import map with \"kit\" and a module script importing it"
    return None


def remote_urls(html: str, *, allowed_origins: set[str]) -> list[str]:
    """Every URL the page would load from another host: src/href attributes, import maps, module
    imports and CSS urls that are absolute (http, https or //host) and not on an allowed origin."""
    collector = _UrlCollector()
    collector.feed(html)
    collector.close()
    remote = []
    for url in collector.urls:
        url = url.strip()
        lowered = url.lower()
        if not (lowered.startswith(("http://", "https://")) or lowered.startswith("//")):
            continue
        full = f"https:{url}" if url.startswith("//") else url
        if not any(full == origin or full.startswith(origin + "/") for origin in allowed_origins if origin):
            remote.append(url)
    return list(dict.fromkeys(remote))


class _UrlCollector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self._in: str | None = None
        self._script_type = ""

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in {"src", "href", "action", "formaction", "data", "poster", "srcset"} and value:
                self.urls.extend(value.split(",") if name == "srcset" else [value])
            if name == "style" and value:
                self.urls.extend(m.group(2) for m in _CSS_URLS.finditer(value))
        if tag in {"script", "style"}:
            self._in = tag
            self._script_type = dict(attrs).get("type", "") or ""

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in == "style":
            self.urls.extend(m.group(2) for m in _CSS_URLS.finditer(data))
        elif self._in == "script" and self._script_type == "importmap":
            self.urls.extend(_import_map_urls(data))
        elif self._in == "script":
            self.urls.extend(m.group(2) for m in _SPECIFIERS.finditer(data))


def _import_map_urls(text: str) -> list[str]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    urls = []
    for section in [data.get("imports", {}), *data.get("scopes", {}).values()] if isinstance(data, dict) else []:
        if isinstance(section, dict):
            urls.extend(str(v) for v in section.values())
    return urls

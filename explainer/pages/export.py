"""One self-contained HTML file from a kit page: three.js, its addons and the kit inlined, nothing fetched.

Every module the page reaches through its import map is read from static/, its import specifiers are
rewritten to bare names (`@offline/<path>`), and a new import map maps each name to a `data:` URL of
the rewritten module, so the file works from `file://` with no server and no network. The kit's
stylesheet goes inline as `<style data-kit-css>`, which the kit then uses instead of fetching it.
Only modules the page imports are included (three.js itself is included whole).
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
from pathlib import Path

STATIC_PREFIX = "/static/"
PREFIX = "@offline/"
# Top-level static imports and re-exports (at the start of a line, so examples in comments are left
# alone): `import x from "s"`, `import "s"`, `export {..} from "s"`, over several lines too.
_STATIC_IMPORT = re.compile(
    r"""^((?:import|export)\b(?:[^;'"`]*?\bfrom)?\s*)(["'])([^"'\n]+)\2""", re.M | re.S
)
_IMPORT_MAP = re.compile(r"""<script\s+type=["']importmap["']\s*>(.*?)</script>""", re.S | re.I)
_MODULE_SCRIPT = re.compile(r"""(<script\s+type=["']module["']\s*>)(.*?)(</script>)""", re.S | re.I)


class ExportError(ValueError):
    """The page cannot be made self-contained (no import map, a module outside static/, ...)."""


def export_html(html: str, *, static_root: Path) -> str:
    """`html` with its import map replaced by inlined modules and the kit's stylesheet inlined."""
    found = _IMPORT_MAP.search(html)
    if not found:
        raise ExportError("the page has no import map: it is not written against the kit")
    try:
        imports = json.loads(found.group(1)).get("imports", {})
    except ValueError as exc:
        raise ExportError(f"the page's import map is not valid JSON ({exc})") from exc
    bundler = _Bundler(static_root=Path(static_root), imports=imports)

    def rewrite_page_script(match: re.Match) -> str:
        return match.group(1) + bundler.rewrite(match.group(2), base=None) + match.group(3)

    body = _MODULE_SCRIPT.sub(rewrite_page_script, html)
    import_map = json.dumps({"imports": bundler.data_urls()}, separators=(",", ":"))
    # "</" inside the JSON would end the script element early; JSON allows "<\/".
    import_map = import_map.replace("</", "<\\/")
    body = _IMPORT_MAP.sub(lambda m: f'<script type="importmap">{import_map}</script>', body, count=1)
    css = (Path(static_root) / "kit" / "kit.css").read_text(encoding="utf-8").replace("</", "<\\/")
    style = f"<style data-kit-css>{css}</style>"
    return body.replace("</head>", f"{style}</head>", 1) if "</head>" in body else style + body


class _Bundler:
    def __init__(self, *, static_root: Path, imports: dict[str, str]):
        self.static_root = static_root.resolve()
        self.imports = imports
        self.modules: dict[str, str] = {}  # static path ("kit/kit.js") -> rewritten source

    def rewrite(self, source: str, *, base: str | None) -> str:
        """`source` with each import specifier replaced by the bare name of the module it resolves to."""
        def replace(match: re.Match) -> str:
            path = self._resolve(match.group(3), base=base)
            self._include(path)
            return f"{match.group(1)}{match.group(2)}{PREFIX}{path}{match.group(2)}"

        return _STATIC_IMPORT.sub(replace, source)

    def data_urls(self) -> dict[str, str]:
        return {
            f"{PREFIX}{path}": "data:text/javascript;base64," + base64.b64encode(code.encode("utf-8")).decode("ascii")
            for path, code in self.modules.items()
        }

    def _include(self, path: str) -> None:
        if path in self.modules:
            return
        file = (self.static_root / path).resolve()
        if self.static_root not in file.parents or not file.is_file():
            raise ExportError(f"module /static/{path} is not in static/")
        self.modules[path] = ""  # placeholder: import cycles stop here
        self.modules[path] = self.rewrite(file.read_text(encoding="utf-8"), base=path)

    def _resolve(self, specifier: str, *, base: str | None) -> str:
        """The path under static/ of `specifier` imported from the module at `base` (None: the page)."""
        if specifier.startswith(("./", "../")):
            if base is None:
                raise ExportError(f"the page imports {specifier!r}, a relative path, which has no file to export")
            return posixpath.normpath(posixpath.join(posixpath.dirname(base), specifier))
        url = self._mapped(specifier)
        if url is None:
            raise ExportError(f"{specifier!r} is neither in the import map nor a path under {STATIC_PREFIX}")
        if not url.startswith(STATIC_PREFIX):
            raise ExportError(f"{specifier!r} maps to {url}, outside {STATIC_PREFIX}")
        return posixpath.normpath(url.removeprefix(STATIC_PREFIX))

    def _mapped(self, specifier: str) -> str | None:
        if specifier in self.imports:
            return self.imports[specifier]
        prefixes = [k for k in self.imports if k.endswith("/") and specifier.startswith(k)]
        if prefixes:
            longest = max(prefixes, key=len)
            return self.imports[longest] + specifier[len(longest):]
        return specifier if specifier.startswith(STATIC_PREFIX) else None


def export_page(html: str) -> str:
    """`export_html` against the project's static/ folder (the one the app serves)."""
    from django.conf import settings

    dirs = getattr(settings, "STATICFILES_DIRS", None)
    root = Path(dirs[0]) if dirs else Path(__file__).resolve().parents[2] / "static"
    return export_html(html, static_root=root)


def download_response(html: str, filename: str):
    """An HTTP response that saves the self-contained page as `filename`."""
    from django.http import HttpResponse

    response = HttpResponse(export_page(html), content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox allow-scripts"  # if a browser shows it instead of saving
    return response

"""The process's page servers: one per source of static/ (the project's folder or a relayed origin)."""

from __future__ import annotations

import threading
from pathlib import Path

from .server import PageServer

_servers: dict[str | None, PageServer] = {}
_servers_lock = threading.Lock()


def page_server(static_from: str | None = None) -> PageServer:
    """The process's HTTP server for pages under check (one per source of static/)."""
    with _servers_lock:
        if static_from not in _servers:
            _servers[static_from] = PageServer(static_root(), upstream=static_from)
        return _servers[static_from]


def static_root() -> Path:
    from django.conf import settings

    if settings.configured and getattr(settings, "STATICFILES_DIRS", None):
        return Path(settings.STATICFILES_DIRS[0])
    return Path(__file__).resolve().parents[2] / "static"

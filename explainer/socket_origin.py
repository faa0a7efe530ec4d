"""Which pages may open the learner's socket: the app's own, on its own port.

Channels' `AllowedHostsOriginValidator` compares the Origin's host with ALLOWED_HOSTS and ignores its
port, yet a browser sends the app's cookies to every port of its host: a page served on another port
(the page origin, say) could open a socket as the learner. So the Origin must be `APP_ORIGIN` exactly
when that is set, else the origin the socket itself was opened on (the Host header, port included).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(value: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, None for anything else (`null`, a file, garbage)."""
    try:
        parts = urlsplit(value.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or DEFAULT_PORTS[parts.scheme]


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """Whether a socket whose handshake carried these Origin and Host headers comes from the app."""
    parsed = _origin(origin or "")
    if parsed is None:
        return False
    scheme, hostname, port = parsed
    if settings.PAGE_ORIGIN and parsed == _origin(settings.PAGE_ORIGIN):
        return False
    if settings.APP_ORIGIN:
        return parsed == _origin(settings.APP_ORIGIN)
    if not validate_host(hostname, settings.ALLOWED_HOSTS):
        return False
    if not host:  # no Host header (a test client): the allowed host is all there is to check
        return True
    domain, host_port = split_domain_port(host.lower())
    return (domain, int(host_port) if host_port else DEFAULT_PORTS[scheme]) == (hostname, port)


class SameOriginValidator:
    """ASGI middleware: a socket from any other origin is refused before the handshake completes."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers", []))
        origin, host = (headers.get(name, b"").decode("latin1") or None for name in (b"origin", b"host"))
        if origin_allowed(origin, host):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)

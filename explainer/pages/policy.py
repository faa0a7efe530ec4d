"""The headers every generated page is served with, in production and in the render check alike.

A generated page is untrusted code. `sandbox allow-scripts` gives the document an opaque origin,
so it can read no cookie, storage or DOM of the app; the rest of the policy lets it load only the
vendored assets (three.js, the kit) and its own inline code, and talk to nobody.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of an absolute URL, or "" for a relative one."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}"


def content_security_policy(*, asset_origins: Iterable[str], frame_ancestors: Iterable[str]) -> str:
    """The page policy; `asset_origins` serve static/ (listed explicitly: under `sandbox`, 'self' is opaque)."""
    assets = " ".join(dict.fromkeys(o for o in asset_origins if o))
    ancestors = " ".join(dict.fromkeys(o for o in frame_ancestors if o)) or "'none'"
    directives = [
        "sandbox allow-scripts",
        "default-src 'none'",
        # Inline code is the page itself; ES modules and the import map count as scripts.
        f"script-src 'unsafe-inline' {assets}".rstrip(),
        f"style-src 'unsafe-inline' {assets}".rstrip(),
        "img-src data: blob:",
        f"font-src data: {assets}".rstrip(),
        "media-src data: blob:",
        "worker-src 'none'",
        "connect-src 'none'",
        "form-action 'none'",
        "base-uri 'none'",
        "manifest-src 'none'",
        f"frame-ancestors {ancestors}",
    ]
    return "; ".join(directives)


# Powerful features a science page never needs; an opaque origin could not use most of them anyway.
PERMISSIONS_POLICY = (
    "camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=(), "
    "payment=(), display-capture=(), clipboard-read=(), clipboard-write=()"
)


def page_headers(*, asset_origins: Iterable[str], frame_ancestors: Iterable[str]) -> dict[str, str]:
    """Response headers for a generated page's HTML."""
    return {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Security-Policy": content_security_policy(
            asset_origins=asset_origins, frame_ancestors=frame_ancestors
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Permissions-Policy": PERMISSIONS_POLICY,
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cache-Control": "private, no-store",
    }


# Static assets are fetched from an opaque origin (`Origin: null`), and module scripts are fetched
# in CORS mode, so whatever serves static/ must answer with this header or every import fails.
STATIC_CORS_HEADERS = {"Access-Control-Allow-Origin": "*", "Cross-Origin-Resource-Policy": "cross-origin"}

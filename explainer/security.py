"""A Content-Security-Policy for the app's own pages (generated pages carry their own, stricter one)."""

from __future__ import annotations

from django.conf import settings

from explainer.pages.policy import origin_of


def app_policy(*, host: str) -> str:
    """Scripts and styles from the app (and STATIC_URL's origin), pages framed from the page origin."""
    static = origin_of(settings.STATIC_URL)
    assets = " ".join(filter(None, ["'self'", static]))
    frames = " ".join(filter(None, ["'self'", settings.PAGE_ORIGIN]))
    return "; ".join([
        "default-src 'self'",
        f"script-src {assets}",
        f"style-src {assets} 'unsafe-inline'",  # style attributes (bars, admin widths)
        f"img-src {assets} data:",
        f"font-src {assets}",
        f"connect-src 'self' ws://{host} wss://{host}",  # the learner's websocket
        f"frame-src {frames}",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ])


class ContentSecurityPolicyMiddleware:
    """Adds `app_policy` to every response that does not set its own policy."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = app_policy(host=request.get_host())
        return response

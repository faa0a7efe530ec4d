"""Serving static/ so that sandboxed pages can load it.

A page's document has an opaque origin, so its module imports (three.js, the kit) are cross-origin
CORS requests with `Origin: null`: without `Access-Control-Allow-Origin` every import fails. These
handlers serve static/ like Django's own, with that header added; wrap the app in the one that fits:
`CorsStaticFilesASGIHandler(django_asgi_app)` or `CorsStaticFilesHandler(WSGIHandler())`.
Static files are public, so allowing every origin gives nothing away.
"""

from __future__ import annotations

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler, StaticFilesHandler

from .policy import STATIC_CORS_HEADERS


class _CorsMixin:
    def serve(self, request):
        response = super().serve(request)
        for name, value in STATIC_CORS_HEADERS.items():
            response[name] = value
        return response


class CorsStaticFilesHandler(_CorsMixin, StaticFilesHandler):
    """WSGI: static/ with CORS headers, everything else to the wrapped application."""


class CorsStaticFilesASGIHandler(_CorsMixin, ASGIStaticFilesHandler):
    """ASGI: static/ with CORS headers, everything else to the wrapped application."""

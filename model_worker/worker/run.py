"""One page through a backend, as an outcome: the entry the Celery task and `manage.py explain` share.

No Celery, no Redis: the caller brings the backend and the sink, and handles what it raises.
"""

from __future__ import annotations

from model_worker.backends.base import PageBackend, PageOutcome, PageRequest, PageSink


def run_page(backend: PageBackend, request: PageRequest, sink: PageSink) -> PageOutcome:
    """Generate one page and describe how it ended."""
    result = backend.generate_page(request, sink)
    if result.stopped:
        return PageOutcome(status="cancelled", stats=result.stats)
    if not result.html.strip():
        return PageOutcome.failed("empty_page", "The model wrote an empty page.", result.stats)
    return PageOutcome(status="done", html=result.html, stats=result.stats)

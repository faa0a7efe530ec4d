"""What the configured page backend can do, as the web tier sees it (read from the worker's settings)."""

from __future__ import annotations

import logging
from dataclasses import replace

from django.conf import settings

from model_worker.config import backend_capabilities, engine_settings, writable_topics
from model_worker.contract.pages import LIBRARY_ONLY, BackendCapabilities

log = logging.getLogger(__name__)


def backend_engine():
    """The GPU workers' engine settings, with the backend the web tier is configured for."""
    return replace(engine_settings(), backend=settings.MODEL_BACKEND)


def backend_features() -> BackendCapabilities:
    """The backend's capabilities; a bad MODEL_BACKEND promises nothing (the worker reports it)."""
    try:
        return backend_capabilities(backend_engine())
    except Exception:
        log.exception("the page backend's capabilities could not be read")
        return LIBRARY_ONLY


def backend_writable() -> frozenset[str] | None:
    """The library pages a library-only backend can write (None: all); as in `backend_features`, a bad
    MODEL_BACKEND must not stop the learner's question."""
    try:
        return writable_topics(backend_engine())
    except Exception:
        log.exception("the page backend's writable topics could not be read")
        return None

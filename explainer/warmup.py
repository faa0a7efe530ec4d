"""A web process's warm-up: the library index (BM25 and the sentence embeddings of every page, seconds of
work, a minute on a starved CPU) is built in a thread as the process starts, so that the first learner's
question does not wait for it. Until it is built the process holds the interpreter most of the time and
answers sockets slowly, so `/readyz` calls it not ready (`done`)."""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)

_thread: threading.Thread | None = None


def start() -> None:
    """Build the library index in a thread (asgi.py, once per process)."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_build, name="library-index", daemon=True)
        _thread.start()


def _build() -> None:
    from django.db import connections

    from explainer.selectors.library import library_index

    try:
        library_index()  # with what the router learned, read from the database
    except Exception:  # noqa: BLE001 - the first question builds it again, and says what went wrong
        log.exception("the library index could not be built at start")
    finally:
        connections.close_all()  # this thread's own connection


def done() -> bool:
    """Whether this process has nothing left to warm (also true where no warm-up was started)."""
    return _thread is None or not _thread.is_alive()

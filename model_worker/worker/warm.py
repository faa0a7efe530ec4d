"""The page backend: loaded once per worker process, as soon as the worker starts."""

from __future__ import annotations

import logging
import threading
from functools import cache

from celery.signals import worker_process_init, worker_ready

from model_worker.backends.base import PageBackend
from model_worker.config import engine_settings, load_backend

log = logging.getLogger(__name__)

_loading = threading.Lock()


def backend() -> PageBackend:
    """The configured backend, loaded once per worker process on its first page (once, too, when the
    pages of a thread pool ask at the same moment: MODEL_BATCH)."""
    with _loading:
        return _load_backend()


@cache
def _load_backend() -> PageBackend:
    settings = engine_settings()
    log.info("loading page backend %s from %s on %s (batch %d)", settings.backend, settings.model_path,
             settings.device, settings.batch)
    return load_backend(settings)


backend.cache_clear = _load_backend.cache_clear  # a test loads another backend


def warm_backend() -> None:
    """Load the backend now, so the first learner's page does not wait for it (about 11 s for the demo
    checkpoint on a 2-core machine, most of it importing torch and transformers). A page asked while it
    loads waits on the same load. A backend that fails to load is logged here and reported to each page
    that asks for it, as before."""
    try:
        backend()
    except Exception:  # noqa: BLE001  (each page reports the error to its learner)
        log.exception("the page backend could not be loaded; every page will report why")


def _warm_in_background() -> None:
    # A thread: a prefork child that takes more than a few seconds to start is killed by Celery.
    threading.Thread(target=warm_backend, name="warm-backend", daemon=True).start()


@worker_process_init.connect
def _warm_pool_process(**_) -> None:
    """Each prefork process (MODEL_BATCH 1: one process, one page at a time) loads its own backend."""
    _warm_in_background()


@worker_ready.connect
def _warm_thread_pool(**_) -> None:
    """A thread pool (MODEL_BATCH > 1) runs its pages in the main process: load the backend there. A
    prefork worker's main process runs no page, so it loads nothing."""
    try:
        threads = engine_settings().batch > 1
    except ValueError:  # a bad setting: the pages report it
        return
    if threads:
        _warm_in_background()

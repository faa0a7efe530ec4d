"""Page backends: `load_backend("package.module:Class", **options)` builds the configured one.

Short names (`clover`, `transformers`, `openai`) are resolved by `model_worker.config`.
"""

from __future__ import annotations

import importlib

from .base import BackendCapabilities, PageBackend, PageRequest, PageResult, PageSink

__all__ = ["BackendCapabilities", "PageBackend", "PageRequest", "PageResult", "PageSink", "backend_class",
           "load_backend"]


def backend_class(spec: str) -> type:
    """The class named by `package.module:Class`."""
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise ValueError(f"backend {spec!r} must look like 'package.module:Class'")
    try:
        return getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"backend {spec!r} cannot be imported: {exc}") from exc


def load_backend(spec: str, **options) -> PageBackend:
    """Import `Class` from `package.module:Class` and instantiate it with `options`."""
    return backend_class(spec)(**options)

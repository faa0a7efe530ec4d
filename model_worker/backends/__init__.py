"""Page backends: `load_backend("package.module:Class", **options)` builds the configured one."""

from __future__ import annotations

import importlib

from .base import PageBackend, PageRequest, PageResult, PageSink

__all__ = ["PageBackend", "PageRequest", "PageResult", "PageSink", "load_backend"]


def load_backend(spec: str, **options) -> PageBackend:
    """Import `Class` from `package.module:Class` and instantiate it with `options`."""
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise ValueError(f"backend {spec!r} must look like 'package.module:Class'")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"backend {spec!r} cannot be imported: {exc}") from exc
    return cls(**options)

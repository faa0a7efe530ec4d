"""Engine settings from the environment: which page backend, which checkpoint, which device."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from model_worker.backends.base import LIBRARY_ONLY, BackendCapabilities
from model_worker.sampler.config import DECODINGS

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BACKEND = "model_worker.backends.clover:CloverBackend"
DEFAULT_MODEL_PATH = REPO_ROOT / "model_worker" / "checkpoints" / "clover-demo"
DEVICES = ("auto", "cpu", "cuda")
# The demo checkpoint writes the library's topics and nothing else (CloverBackend.capabilities).
CLOVER_CAPABILITIES = BackendCapabilities(open_domain=False, revises_pages=True, streams="drafts", context=2560)
# Capabilities of the backends shipped here, so that reading them imports no torch; any other backend's
# module is imported for its class's `capabilities` (keep heavy imports inside its methods).
DECLARED_CAPABILITIES = {DEFAULT_BACKEND: CLOVER_CAPABILITIES}


@dataclass(frozen=True)
class EngineSettings:
    backend: str = DEFAULT_BACKEND
    model_path: Path = DEFAULT_MODEL_PATH
    device: str = "auto"
    decoding: str | None = None  # None: the backend's own default

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ValueError(f"MODEL_DEVICE={self.device!r} is not one of {', '.join(DEVICES)}")
        if self.decoding is not None and self.decoding not in DECODINGS:
            raise ValueError(f"MODEL_DECODING={self.decoding!r} is not one of {', '.join(DECODINGS)}")
        if ":" not in self.backend:
            raise ValueError(f"MODEL_BACKEND={self.backend!r} must look like 'package.module:Class'")


def engine_settings(environ: Mapping[str, str] | None = None) -> EngineSettings:
    """Read MODEL_BACKEND, MODEL_PATH, MODEL_DEVICE and MODEL_DECODING; relative paths are taken from the
    repo root."""
    env = os.environ if environ is None else environ
    path = Path(env.get("MODEL_PATH") or DEFAULT_MODEL_PATH)
    if not path.is_absolute():
        path = REPO_ROOT / path
    return EngineSettings(
        backend=env.get("MODEL_BACKEND") or DEFAULT_BACKEND,
        model_path=path,
        device=(env.get("MODEL_DEVICE") or "auto").lower(),
        decoding=(env.get("MODEL_DECODING") or "").lower() or None,
    )


def backend_capabilities(settings: EngineSettings | None = None) -> BackendCapabilities:
    """What the configured backend can do, without building it or loading a checkpoint."""
    settings = settings or engine_settings()
    if settings.backend in DECLARED_CAPABILITIES:
        return DECLARED_CAPABILITIES[settings.backend]
    import importlib

    module_name, _, class_name = settings.backend.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"backend {settings.backend!r} cannot be imported: {exc}") from exc
    declared = getattr(cls, "capabilities", LIBRARY_ONLY)
    if not isinstance(declared, BackendCapabilities):
        raise TypeError(f"{settings.backend}.capabilities is not a BackendCapabilities")
    return declared


def writable_topics(settings: EngineSettings | None = None) -> frozenset[str] | None:
    """The library pages (slugs, as `PageRequest.topic` names them) a library-only backend can write: the
    `pages` its checkpoint was trained on (`training.json` in MODEL_PATH, read without torch). None when
    the backend is open-domain, or its checkpoint does not say (then it is asked for any library page)."""
    settings = settings or engine_settings()
    if backend_capabilities(settings).open_domain:
        return None
    path = settings.model_path / "training.json"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _trained_pages(path, stamp)


@functools.lru_cache(maxsize=8)
def _trained_pages(path: Path, stamp: int) -> frozenset[str] | None:
    try:
        pages = json.loads(path.read_text(encoding="utf-8")).get("pages")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
        return None
    return frozenset(pages)


def resolve_device(device: str) -> str:
    """Turn `auto` into `cuda` when a GPU is visible, else `cpu`."""
    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def default_threads() -> int:
    """CPU cores not already busy, at least 1: oversubscribed torch threads spin-wait and crawl."""
    cores = os.cpu_count() or 1
    return max(1, min(cores, round(cores - os.getloadavg()[0])))


def load_backend(settings: EngineSettings | None = None):
    """Instantiate the configured page backend with the configured checkpoint and device."""
    from model_worker.backends import load_backend as build

    settings = settings or engine_settings()
    options = {} if settings.decoding is None else {"decoding": settings.decoding}
    return build(settings.backend, path=settings.model_path, device=settings.device, **options)

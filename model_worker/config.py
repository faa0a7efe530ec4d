"""Engine settings from the environment: which page backend, which checkpoint, which device."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from model_worker.sampler.decodings import DECODINGS

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BACKEND = "model_worker.backends.clover:CloverBackend"
DEFAULT_MODEL_PATH = REPO_ROOT / "model_worker" / "checkpoints" / "clover-demo"
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class EngineSettings:
    backend: str = DEFAULT_BACKEND
    model_path: Path = DEFAULT_MODEL_PATH
    device: str = "auto"
    decoding: str | None = None  # None: the backend's own default
    threads: int | None = None  # CPU torch threads; None: the cores not already busy
    max_new_tokens: int | None = None  # cap on a page's tokens; None: the checkpoint's context

    def __post_init__(self) -> None:
        for name, value in (("MODEL_THREADS", self.threads), ("MODEL_MAX_NEW_TOKENS", self.max_new_tokens)):
            if value is not None and value < 1:
                raise ValueError(f"{name}={value} must be at least 1")
        if self.device not in DEVICES:
            raise ValueError(f"MODEL_DEVICE={self.device!r} is not one of {', '.join(DEVICES)}")
        if self.decoding is not None and self.decoding not in DECODINGS:
            raise ValueError(f"MODEL_DECODING={self.decoding!r} is not one of {', '.join(DECODINGS)}")
        if ":" not in self.backend:
            raise ValueError(f"MODEL_BACKEND={self.backend!r} must look like 'package.module:Class'")


def engine_settings(environ: Mapping[str, str] | None = None) -> EngineSettings:
    """Read MODEL_BACKEND, MODEL_PATH, MODEL_DEVICE, MODEL_DECODING, MODEL_THREADS and MODEL_MAX_NEW_TOKENS;
    relative paths are taken from the repo root."""
    env = os.environ if environ is None else environ
    path = Path(env.get("MODEL_PATH") or DEFAULT_MODEL_PATH)
    if not path.is_absolute():
        path = REPO_ROOT / path
    return EngineSettings(
        backend=env.get("MODEL_BACKEND") or DEFAULT_BACKEND,
        model_path=path,
        device=(env.get("MODEL_DEVICE") or "auto").lower(),
        decoding=(env.get("MODEL_DECODING") or "").lower() or None,
        threads=_count(env, "MODEL_THREADS"),
        max_new_tokens=_count(env, "MODEL_MAX_NEW_TOKENS"),
    )


def _count(env: Mapping[str, str], name: str) -> int | None:
    value = (env.get(name) or "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a whole number") from None


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
    options = {k: v for k, v in (("decoding", settings.decoding), ("threads", settings.threads),
                                 ("max_new_tokens", settings.max_new_tokens)) if v is not None}
    return build(settings.backend, path=settings.model_path, device=settings.device, **options)

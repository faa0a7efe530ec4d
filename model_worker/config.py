"""Engine settings from the environment: which page backend, which checkpoint, which device."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# MODEL_BACKEND's short names; any other value is a `package.module:Class` path.
BACKENDS = {
    "clover": "model_worker.backends.clover:CloverBackend",
    "transformers": "model_worker.backends.transformers:TransformersBackend",
    "openai": "model_worker.backends.openai:OpenAIBackend",
}
DEFAULT_BACKEND = "clover"


def _capabilities():
    from model_worker.backends.base import BackendCapabilities

    return {
        # The demo checkpoint writes the library pages it learned; asked to revise one it writes nothing usable.
        "clover": BackendCapabilities(open_domain=False, revises_pages=False, streams="drafts", context=2560),
        "transformers": BackendCapabilities(open_domain=True, revises_pages=True, streams="tokens", context=0),
        "openai": BackendCapabilities(open_domain=True, revises_pages=True, streams="tokens", context=0),
    }
DEFAULT_MODEL_PATH = REPO_ROOT / "model_worker" / "checkpoints" / "clover-demo"
DEVICES = ("auto", "cpu", "cuda")
DECODINGS = ("diffusion", "verified", "ar")  # the named settings of backends.clover.DECODING


@dataclass(frozen=True)
class EngineSettings:
    backend: str = DEFAULT_BACKEND
    model_path: Path = DEFAULT_MODEL_PATH
    device: str = "auto"
    decoding: str | None = None  # None: the backend's own default
    dtype: str = "auto"  # transformers: auto, float32, bfloat16, float16
    max_new_tokens: int | None = None  # None: what the context leaves
    base_url: str = "http://127.0.0.1:8000/v1"  # openai: the server's API root
    model_name: str = ""  # openai: the served model's name
    api_key: str = ""  # openai: sent as a bearer token when set
    timeout_s: float = 300.0  # openai: longest wait for the next piece of a reply

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ValueError(f"MODEL_DEVICE={self.device!r} is not one of {', '.join(DEVICES)}")
        if self.decoding is not None and self.decoding not in DECODINGS:
            raise ValueError(f"MODEL_DECODING={self.decoding!r} is not one of {', '.join(DECODINGS)}")
        if self.backend not in BACKENDS and ":" not in self.backend:
            raise ValueError(f"MODEL_BACKEND={self.backend!r} is not one of {', '.join(BACKENDS)} "
                             "and does not look like 'package.module:Class'")
        if self.max_new_tokens is not None and self.max_new_tokens < 1:
            raise ValueError(f"MODEL_MAX_NEW_TOKENS={self.max_new_tokens} must be at least 1")

    @property
    def backend_spec(self) -> str:
        """The `package.module:Class` path of the backend."""
        return BACKENDS.get(self.backend, self.backend)


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
        dtype=(env.get("MODEL_DTYPE") or "auto").lower(),
        max_new_tokens=_number(env, "MODEL_MAX_NEW_TOKENS", int),
        base_url=env.get("MODEL_BASE_URL") or EngineSettings.base_url,
        model_name=env.get("MODEL_NAME") or "",
        api_key=env.get("MODEL_API_KEY") or "",
        timeout_s=_number(env, "MODEL_TIMEOUT_S", float) or EngineSettings.timeout_s,
    )


def _number(env: Mapping[str, str], name: str, kind: type):
    raw = env.get(name)
    if not raw:
        return None
    try:
        return kind(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None


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
    """Instantiate the configured page backend: `Class.from_settings(settings)` when the class has it,
    else `Class(path=..., device=...[, decoding=...])`."""
    from model_worker.backends import backend_class

    settings = settings or engine_settings()
    cls = backend_class(settings.backend_spec)
    if hasattr(cls, "from_settings"):
        return cls.from_settings(settings)
    options = {} if settings.decoding is None else {"decoding": settings.decoding}
    return cls(path=settings.model_path, device=settings.device, **options)


def backend_capabilities(name: str):
    """What a backend can do, without loading a model or its libraries (short name), or from its class's
    `capabilities` (dotted path); None when it declares none."""
    known = _capabilities()
    if name in known:
        return known[name]
    from model_worker.backends import backend_class

    return getattr(backend_class(name), "capabilities", None)
